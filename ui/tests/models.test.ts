/**
 * The composer's model list (issue 30, item 1), against the in-memory fake backend: it is read again
 * when it opens and when the window gets focus (a provider added elsewhere appears without a
 * restart), the last lists stay on screen meanwhile, a list that fails says why, "Other model…"
 * takes any id, and a "model not found" answer offers the server's models (one click asks again).
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState, MODELS_FRESH_MS } from '../src/lib/state/app.svelte';
import { OTHER_MODEL, pickerGroups } from '../src/lib/util/models';

const schedule = (cb: () => void) => setTimeout(cb, 0);
const SEP = '\u0000';

async function start(backend: Backend) {
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return app;
}

const picker = () => screen.getByTestId('model-picker') as HTMLSelectElement;
const values = () => [...picker().options].map((o) => o.value.replace(SEP, '/'));

async function send(text: string) {
  const el = screen.getByTestId('composer-input') as HTMLTextAreaElement;
  el.value = text;
  await fireEvent.input(el);
  await fireEvent.keyDown(el, { key: 'Enter' });
}

async function typeOtherModel(provider: string, model: string) {
  picker().value = `${provider}${SEP}${OTHER_MODEL}`;
  await fireEvent.change(picker());
  const field = screen.getByTestId('model-other-input') as HTMLInputElement;
  expect(document.activeElement).toBe(field);
  field.value = model;
  await fireEvent.input(field);
  await fireEvent.submit(screen.getByTestId('model-other'));
}

beforeEach(() => {
  localStorage.clear();
  vi.useRealTimers();
});

describe('the model list', () => {
  it('is read again when it opens: a provider added elsewhere appears, and the old lists stay meanwhile', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const app = await start(backend);
    expect(values()).not.toContain('box/llama3.2');
    // Another process (the CLI) adds a provider to the same store.
    await backend.addProvider({ name: 'box', kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: null, options: { generation: {} } }, false);

    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const list = backend.listModels.bind(backend);
    const spy = vi.spyOn(backend, 'listModels').mockImplementation(async (p) => {
      await gate;
      return list(p);
    });
    // Opening the picker right after start is within the fresh window: nothing is read.
    await fireEvent.pointerDown(picker());
    expect(spy).not.toHaveBeenCalled();
    const refreshed = app.refreshModels(true);
    await waitFor(() => expect(picker().dataset.refreshing).toBe('true'));
    expect(values()).toContain('ollama/qwen2.5-coder:7b'); // stale while it revalidates
    release();
    await refreshed;
    await waitFor(() => expect(values()).toContain('box/llama3.2'));
    expect(picker().dataset.refreshing).toBeUndefined();
  });

  it('is read again when the window gets focus, once the last read is old enough', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    await start(backend);
    const spy = vi.spyOn(backend, 'listProviders');
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + MODELS_FRESH_MS + 1);
    window.dispatchEvent(new Event('focus'));
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
    window.dispatchEvent(new Event('focus'));
    await Promise.resolve();
    expect(spy).toHaveBeenCalledTimes(1); // just read: not again
    clock.mockRestore();
  });

  it('says why a list could not be read, keeps the profile model, and takes a typed model id', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const sendSpy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    const error = screen.getAllByTestId('model-list-error');
    expect(error).toHaveLength(1);
    expect(error[0]?.textContent).toContain('Could not list models: Could not list the models of lmstudio');
    expect(values()).toContain('lmstudio/qwen2.5-7b-instruct');

    await typeOtherModel('lmstudio', 'my-finetune:q4');
    expect(picker().value).toBe(`lmstudio${SEP}my-finetune:q4`);
    await send('hello');
    await waitFor(() => expect(sendSpy).toHaveBeenCalled());
    expect(sendSpy.mock.calls[0]?.[0]).toMatchObject({ provider: 'lmstudio', model: 'my-finetune:q4' });
  });

  it('keeps a typed id the server does not list in its group', () => {
    const providers = [{ name: 'openai', kind: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', options: { generation: {} }, isDefault: true }];
    const groups = pickerGroups(providers, { openai: ['gpt-4o-mini', 'gpt-4o'] }, {}, { provider: 'openai', model: 'gpt-9' });
    expect(groups[0]).toMatchObject({ label: 'openai (default)', models: ['gpt-9', 'gpt-4o-mini', 'gpt-4o'], error: null });
  });
});

describe('a model the server does not have', () => {
  it('offers the models the server has; picking one asks again with it and it answers', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const regen = vi.spyOn(backend, 'regenerate');
    const app = await start(backend);
    await typeOtherModel('openai', 'gpt-9');
    await send('hello there');
    const offer = await screen.findByTestId('model-offer', {}, { timeout: 3000 });
    const failed = offer.closest('[data-testid="message"]') as HTMLElement;
    expect(failed.dataset.status).toBe('error');
    expect(within(failed).getByRole('alert').textContent).toContain('has no such model or endpoint');
    const offered = await within(offer).findAllByTestId('model-offer-model');
    expect(offered.map((b) => b.dataset.model)).toEqual(['gpt-4o-mini', 'gpt-4o', 'o3-mini']);

    await fireEvent.click(offered[1] as HTMLElement);
    await waitFor(() => expect(regen).toHaveBeenCalled());
    expect(regen.mock.calls[0]?.[2]).toMatchObject({ provider: 'openai', model: 'gpt-4o' });
    expect(app.choice).toMatchObject({ provider: 'openai', model: 'gpt-4o' });
    await waitFor(() => {
      const answers = screen.getAllByTestId('message').filter((m) => m.dataset.role === 'assistant');
      expect(answers.at(-1)?.dataset.status).toBe('complete');
    }, { timeout: 3000 });
    expect(screen.queryByTestId('model-offer')).toBeNull();
  });
});
