/**
 * Budgets that pause: the pause card says what was spent and the limit, takes an allowance in the
 * limit's unit (refusing zero and text before anything is sent), and its three choices reach the
 * shell; through the fake, a turn waits at the pause until the person chooses. The budget fields
 * read back into a `Budget` the way the service checks it.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import BudgetPauseCard from '../src/lib/components/BudgetPauseCard.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import type { BudgetPause } from '../src/lib/model/message';
import { AppState } from '../src/lib/state/app.svelte';
import { budgetFields, formatLimit, parseDuration, readBudget } from '../src/lib/util/budget';
import { formatDuration } from '../src/lib/util/format';
import { formatUsd } from '../src/lib/util/money';

const schedule = (cb: () => void) => setTimeout(cb, 0);

const PAUSE: BudgetPause = {
  type: 'budgetPaused',
  id: 'm1/budget-1',
  kind: 'cost',
  scope: 'turn',
  spent: { steps: 3, elapsedMs: 65_000, costUsd: 0.0412, costUnknown: false },
  limit: 0.05,
  nextCostUsd: 0.012,
  agent: null,
};

beforeEach(() => localStorage.clear());

describe('the budget pause card', () => {
  it('shows what was spent and the limit the next request would pass', () => {
    render(BudgetPauseCard, { props: { pause: { ...PAUSE, agent: 'Scout[1]' }, onchoose: () => {} } });
    const card = screen.getByTestId('budget-pause');
    expect(card.textContent).toContain("the next request would pass this turn's cost budget ($0.05)");
    expect(screen.getByTestId('budget-spent-steps').textContent).toBe('3');
    expect(screen.getByTestId('budget-spent-time').textContent).toBe('1 min 5 s');
    expect(screen.getByTestId('budget-spent-cost').textContent).toBe('$0.041');
    expect(card.textContent).toContain('≈ $0.012');
    expect(screen.getByTestId('budget-pause-agent').textContent).toContain('Scout[1]');
  });

  it('writes dollars as the cost line under an answer does', () => {
    render(BudgetPauseCard, { props: { pause: { ...PAUSE, spent: { ...PAUSE.spent, costUsd: 0.013 } }, onchoose: () => {} } });
    expect(screen.getByTestId('budget-spent-cost').textContent).toBe(formatUsd(0.013));
    expect(formatUsd(0.013)).toBe('$0.013');
  });

  it("says a chat's budget is the chat's, and that continuing raises it for the rest of the chat", async () => {
    const pause = { ...PAUSE, scope: 'chat' as const, limit: 2, spent: { ...PAUSE.spent, costUsd: 2.1 } };
    render(BudgetPauseCard, { props: { pause, onchoose: () => {} } });
    expect(screen.getByTestId('budget-pause').textContent).toContain("the next request would pass this chat's cost budget ($2.00)");
    expect(screen.getByTestId('budget-raise').textContent).toBe("Continue raises this chat's budget to $4.10 for the rest of the chat.");
    await fireEvent.input(screen.getByTestId('budget-allowance'), { target: { value: '$0.90' } });
    expect(screen.getByTestId('budget-raise').textContent).toContain("raises this chat's budget to $3.00");
  });

  it('says nothing of raising a budget at a turn\'s pause', () => {
    render(BudgetPauseCard, { props: { pause: PAUSE, onchoose: () => {} } });
    expect(screen.queryByTestId('budget-raise')).toBeNull();
  });

  it('says "unknown" for a cost no price was known for', () => {
    const pause = { ...PAUSE, kind: 'steps' as const, limit: 3, spent: { ...PAUSE.spent, costUsd: 0, costUnknown: true } };
    render(BudgetPauseCard, { props: { pause, onchoose: () => {} } });
    expect(screen.getByTestId('budget-spent-cost').textContent).toBe('unknown');
    expect(screen.getByTestId('budget-pause').textContent).toContain("this turn's step budget (3 steps)");
  });

  it('continues with the same amount again, a typed allowance, answers now or stops', async () => {
    const onchoose = vi.fn();
    render(BudgetPauseCard, { props: { pause: PAUSE, onchoose } });
    await fireEvent.click(screen.getByTestId('budget-continue'));
    expect(onchoose).toHaveBeenLastCalledWith({ choice: 'continue' });
    const amount = screen.getByTestId('budget-allowance') as HTMLInputElement;
    await fireEvent.input(amount, { target: { value: '$0.25' } });
    await fireEvent.click(screen.getByTestId('budget-continue'));
    expect(onchoose).toHaveBeenLastCalledWith({ choice: 'continue', allowance: 0.25 });
    await fireEvent.click(screen.getByTestId('budget-answer'));
    expect(onchoose).toHaveBeenLastCalledWith({ choice: 'answerNow' });
    await fireEvent.click(screen.getByTestId('budget-stop'));
    expect(onchoose).toHaveBeenLastCalledWith({ choice: 'stop' });
  });

  it('refuses zero, negative, fractional steps and text before anything is sent', async () => {
    const onchoose = vi.fn();
    render(BudgetPauseCard, { props: { pause: { ...PAUSE, kind: 'steps', limit: 3 }, onchoose } });
    const amount = screen.getByTestId('budget-allowance') as HTMLInputElement;
    for (const bad of ['0', '-2', '1.5', 'lots']) {
      await fireEvent.input(amount, { target: { value: bad } });
      await fireEvent.click(screen.getByTestId('budget-continue'));
      expect(screen.getByRole('alert').textContent).toContain('whole number of steps');
      expect(amount.getAttribute('aria-invalid')).toBe('true');
    }
    expect(onchoose).not.toHaveBeenCalled();
  });
});

describe('a turn paused at a budget', () => {
  async function start(backend: Backend) {
    const app = new AppState(backend, { schedule });
    render(App, { props: { app } });
    await app.init();
    return app;
  }

  async function send(text: string) {
    const el = screen.getByTestId('composer-input') as HTMLTextAreaElement;
    el.value = text;
    await fireEvent.input(el);
    await fireEvent.keyDown(el, { key: 'Enter' });
  }

  it('waits at the card, and Continue lets the answer finish', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const resolve = vi.spyOn(backend, 'resolveBudget');
    await start(backend);
    await send('What time is it? Mind the budget.');
    const card = await screen.findByTestId('budget-pause');
    expect(within(card).getByTestId('budget-spent-steps').textContent).toBe('1');
    await fireEvent.click(within(card).getByTestId('budget-continue'));
    expect(resolve).toHaveBeenCalledWith(expect.any(String), { choice: 'continue' });
    await waitFor(() => {
      const answers = screen.getAllByTestId('message').filter((m) => m.dataset.role === 'assistant');
      expect(answers.at(-1)?.dataset.status).toBe('complete');
    });
    expect(screen.queryByTestId('budget-pause')).toBeNull();
  });

  it('Stop ends the answer there, keeping what it had', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    await start(backend);
    await send('What time is it? Mind the budget.');
    await fireEvent.click(await screen.findByTestId('budget-stop'));
    await waitFor(() => expect(screen.queryByTestId('budget-pause')).toBeNull());
    await waitFor(() => {
      const answers = screen.getAllByTestId('message').filter((m) => m.dataset.role === 'assistant');
      expect(answers.at(-1)?.dataset.status).toBe('complete');
      expect(within(answers.at(-1)!).getByTestId('tool-card').dataset.status).toBe('ok');
    });
  });
});

describe('budget fields', () => {
  it('read steps, a duration and dollars, and leave empty fields unlimited', () => {
    expect(readBudget({ steps: '5', time: '1h30m', cost: '$0.50' })).toEqual({ budget: { steps: 5, timeSecs: 5400, costUsd: 0.5 }, errors: {} });
    expect(readBudget({ steps: '', time: '', cost: '' })).toEqual({ budget: {}, errors: {} });
    expect(budgetFields({ steps: 5, timeSecs: 90, costUsd: 0.5 })).toEqual({ steps: '5', time: '1m30s', cost: '0.5' });
    expect(parseDuration('90s')).toBe(90);
    expect(parseDuration('soon')).toBeNull();
    expect(formatDuration(4200)).toBe('4.2 s');
  });

  it('write limits and durations in words, one way everywhere', () => {
    expect([450, 4200, 12_000, 65_000, 180_000, 3_780_000, 7_200_000].map(formatDuration)).toEqual(['450 ms', '4.2 s', '12 s', '1 min 5 s', '3 min', '1 h 3 min', '2 h']);
    expect(formatLimit('time', 90)).toBe('1 min 30 s');
    expect(formatLimit('cost', 0.5)).toBe('$0.50');
    expect(formatLimit('steps', 1)).toBe('1 step');
  });

  it('refuse zero, negative numbers and text with a message per field', () => {
    const { errors } = readBudget({ steps: '0', time: 'soon', cost: '-1' });
    expect(errors.steps).toContain('whole number');
    expect(errors.time).toContain('duration');
    expect(errors.cost).toContain('more than 0');
    expect(readBudget({ steps: 'abc', time: '0s', cost: 'free' }).errors).toEqual({
      steps: expect.any(String),
      time: expect.any(String),
      cost: expect.any(String),
    });
  });
});

describe("a chat's budget in its parameters dialog", () => {
  it('refuses zero and text per field, and saves steps, time and cost into the chat setup', async () => {
    const { default: ChatParamsDialog } = await import('../src/lib/components/ChatParamsDialog.svelte');
    const { ChatParamsStore } = await import('../src/lib/state/chatParams.svelte');
    const setChatSetup = vi.fn(async () => ({ toolsets: [] }));
    const store = new ChatParamsStore({ setChatSetup });
    store.adoptBudget('c1', { steps: 3 });
    const onclose = vi.fn();
    render(ChatParamsDialog, { props: { conversationId: 'c1', title: 'Chat', store, onclose } });
    const steps = screen.getByTestId('chat-params-budget-steps') as HTMLInputElement;
    expect(steps.value).toBe('3');
    await fireEvent.input(steps, { target: { value: '0' } });
    await fireEvent.input(screen.getByTestId('chat-params-budget-time'), { target: { value: 'soon' } });
    await fireEvent.click(screen.getByTestId('chat-params-save'));
    expect(steps.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByTestId('chat-params-dialog').textContent).toContain('like 90s, 5m or 1h30m');
    expect(setChatSetup).not.toHaveBeenCalled();
    await fireEvent.input(steps, { target: { value: '5' } });
    await fireEvent.input(screen.getByTestId('chat-params-budget-time'), { target: { value: '90s' } });
    await fireEvent.input(screen.getByTestId('chat-params-budget-cost'), { target: { value: '0.5' } });
    await fireEvent.click(screen.getByTestId('chat-params-save'));
    await waitFor(() => expect(onclose).toHaveBeenCalled());
    expect(setChatSetup).toHaveBeenCalledWith('c1', { budget: { steps: 5, timeSecs: 90, costUsd: 0.5 } });
    expect(store.budget('c1')).toEqual({ steps: 5, timeSecs: 90, costUsd: 0.5 });
  });
});
