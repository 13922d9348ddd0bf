/**
 * The context meter in the composer: used / window for the next request when a chat opens, a
 * breakdown on hover and on keyboard focus, updated by every request of a turn and when the
 * model changes, "window unknown" when it is, and a bar that warns near the compaction point.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ConversationContext } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { formatTokens, meterLevel } from '../src/lib/util/tokens';

const schedule = (cb: () => void) => setTimeout(cb, 0);

beforeEach(() => {
  localStorage.clear();
});

async function start(backend: Backend = createFakeBackend({ tickMs: 0 })) {
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return { app, backend };
}

const figure = (usedTokens: number, window: number | null): ConversationContext => ({
  usedTokens,
  window,
  breakdown: { instructions: 1_000, tools: 2_000, history: usedTokens - 3_000 - 500, toolResults: 500, attachments: 0 },
  estimated: false,
  compactAt: 0.8,
});

describe('token figures', () => {
  it('are short and never rounded up', () => {
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(4_096)).toBe('4K');
    expect(formatTokens(4_196)).toBe('4.1K');
    expect(formatTokens(41_999)).toBe('41K');
    expect(formatTokens(128_000)).toBe('128K');
    expect(formatTokens(1_048_576)).toBe('1.04M');
  });

  it('warn within ten points of the compaction threshold and past it', () => {
    expect(meterLevel(50_000, 128_000, 0.8)).toBe('ok');
    expect(meterLevel(90_000, 128_000, 0.8)).toBe('near');
    expect(meterLevel(103_000, 128_000, 0.8)).toBe('over');
    expect(meterLevel(103_000, null, 0.8)).toBe('unknown');
  });
});

describe('the context meter', () => {
  it('shows the next request’s figure when a chat opens, with its breakdown on focus', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const asked = vi.spyOn(backend, 'conversationContext').mockResolvedValue(figure(41_500, 128_000));
    const { app } = await start(backend);
    const id = app.conversations[0]?.id as string;
    await app.open(id);
    const meter = await screen.findByTestId('context-meter');
    expect(screen.getByTestId('context-meter-text').textContent?.trim()).toBe('41K / 128K');
    expect(meter.dataset.level).toBe('ok');
    expect(asked).toHaveBeenCalledWith(id, expect.anything(), expect.anything());
    const breakdown = screen.getByTestId('context-breakdown');
    expect(breakdown.hidden).toBe(true);
    await fireEvent.focus(meter);
    expect(breakdown.hidden).toBe(false);
    expect(meter.getAttribute('aria-describedby')).toBe(breakdown.id);
    expect(screen.getByTestId('context-part-tools').textContent).toBe('2K');
    expect(screen.getByTestId('context-part-toolResults').textContent).toBe('500');
    await fireEvent.keyDown(meter, { key: 'Escape' });
    expect(breakdown.hidden).toBe(true);
  });

  it('says when the window is unknown and warns near the compaction point', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const answers = [figure(20_000, null), figure(110_000, 128_000)];
    vi.spyOn(backend, 'conversationContext').mockImplementation(async () => answers.shift() ?? figure(110_000, 128_000));
    const { app } = await start(backend);
    await app.open(app.conversations[0]?.id as string);
    await waitFor(() => expect(screen.getByTestId('context-meter-text').textContent?.trim()).toBe('20K / window unknown'));
    expect(screen.getByTestId('context-meter').dataset.level).toBe('unknown');
    // Another model: the figure is asked again for it.
    app.choice = { provider: app.choice?.provider ?? 'openai', model: 'gpt-4o' };
    await waitFor(() => expect(screen.getByTestId('context-meter-text').textContent?.trim()).toBe('110K / 128K'));
    expect(screen.getByTestId('context-meter').dataset.level).toBe('over');
  });

  it('follows each request of a turn', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const { app } = await start(backend);
    await app.open(app.conversations[0]?.id as string);
    await screen.findByTestId('context-meter');
    // From here on only the turn's own events move the meter.
    vi.spyOn(backend, 'conversationContext').mockReturnValue(new Promise(() => {}));
    const send = backend.sendMessage.bind(backend);
    const counts: number[] = [];
    vi.spyOn(backend, 'sendMessage').mockImplementation((request, handlers) =>
      send(request, {
        ...handlers,
        onEvent: (e) => {
          if (e.type === 'context') counts.push(e.usedTokens);
          handlers.onEvent(e);
        },
      }),
    );
    const input = screen.getByTestId('composer-input') as HTMLTextAreaElement;
    input.value = 'What time is it in Tokyo?';
    await fireEvent.input(input);
    await fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(app.current.running).toBe(false));
    expect(counts.length).toBeGreaterThan(0);
    expect(app.current.context?.usedTokens).toBe(counts.at(-1));
  });
});
