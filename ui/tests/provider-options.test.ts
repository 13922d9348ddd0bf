/**
 * Settings → Providers: a profile's Advanced options (output limit, reasoning, tools, `store`) and
 * "Test connection", against the in-memory fake backend.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ProviderProfile } from '../src/lib/ipc/bindings';
import { createFakeBackend, type FakeOptions } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { formatUsage } from '../src/lib/util/format';
import { buildProfileOptions, optionsForm } from '../src/lib/util/providerOptions';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(opts: FakeOptions = {}, patch: Partial<Backend> = {}) {
  const base = createFakeBackend({ tickMs: 0, empty: true, ...opts });
  const backend: Backend = { ...base, ...patch };
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return { app, backend };
}

async function openProviders(): Promise<HTMLElement> {
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-providers'));
  return screen.findByTestId('settings-section-providers');
}

function byTestId<T extends HTMLElement = HTMLElement>(id: string): T {
  return screen.getByTestId(id) as T;
}

async function setValue(el: HTMLInputElement | HTMLSelectElement, value: string) {
  el.value = value;
  await fireEvent.input(el);
  await fireEvent.change(el);
}

function rowOf(name: string): HTMLElement {
  return screen.getAllByTestId('provider-row').find((r) => r.dataset.name === name) as HTMLElement;
}

/** The profile sent by the last add_provider call. */
function lastSent(add: { mock: { calls: unknown[][] } }): ProviderProfile {
  return add.mock.calls.at(-1)?.[0] as ProviderProfile;
}

beforeEach(() => {
  localStorage.clear();
});

describe('the options as the form reads and writes them', () => {
  it('leaves out what is empty, and keeps store only for the Responses API', () => {
    const empty = optionsForm();
    expect(buildProfileOptions(empty, 'openai')).toEqual({ options: { generation: {} } });
    const f = { maxOutputTokens: ' 2048 ', effort: 'low' as const, thinkingBudget: '0', tools: 'on' as const, store: 'off' as const };
    expect(buildProfileOptions(f, 'openai-responses')).toEqual({
      options: { generation: { maxOutputTokens: 2048, reasoningEffort: 'low', thinkingBudget: 0 }, tools: true, store: false },
    });
    expect(buildProfileOptions(f, 'anthropic')).toEqual({ options: { generation: { maxOutputTokens: 2048, reasoningEffort: 'low', thinkingBudget: 0 }, tools: true } });
    expect(optionsForm({ generation: { maxOutputTokens: 10, thinkingBudget: 0 }, tools: false, store: true })).toEqual({
      maxOutputTokens: '10',
      effort: '',
      thinkingBudget: '0',
      tools: 'off',
      store: 'on',
    });
  });

  it('takes whole numbers only: the output limit from 1, the thinking budget from 0', () => {
    const bad = (maxOutputTokens: string, thinkingBudget: string) => buildProfileOptions({ ...optionsForm(), maxOutputTokens, thinkingBudget }, 'openai');
    for (const v of ['0', '-5', '1.5', '1e3', 'abc', '4294967296']) expect(bad(v, '')).toHaveProperty('errors.maxOutputTokens');
    for (const v of ['-1', '0.5', 'x']) expect(bad('', v)).toHaveProperty('errors.thinkingBudget');
    expect(bad('1', '0')).toEqual({ options: { generation: { maxOutputTokens: 1, thinkingBudget: 0 } } });
  });
});

describe('a profile’s Advanced options', () => {
  it('are closed at first, and round-trip: set, save, reopen shows them, clear them again', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    await openProviders();

    await fireEvent.click(byTestId('provider-edit-ollama'));
    const advanced = byTestId<HTMLDetailsElement>('provider-advanced');
    expect(advanced.open).toBe(false);
    expect(byTestId('provider-advanced-toggle').textContent).toContain('Advanced');
    await fireEvent.click(byTestId('provider-advanced-toggle'));
    await waitFor(() => expect(advanced.open).toBe(true));

    expect(byTestId<HTMLInputElement>('provider-max-tokens').value).toBe('');
    expect(byTestId<HTMLSelectElement>('provider-reasoning-effort').value).toBe('');
    expect(byTestId<HTMLSelectElement>('provider-tools').value).toBe('');
    expect(within(advanced).getByLabelText('Thinking budget')).toBe(byTestId('provider-thinking-budget'));
    expect(advanced.textContent).toContain('Anthropic and Gemini; 0 turns thinking off');
    expect(advanced.textContent).toContain('Auto follows the model');

    await setValue(byTestId('provider-max-tokens'), '4096');
    await setValue(byTestId('provider-reasoning-effort'), 'high');
    await setValue(byTestId('provider-thinking-budget'), '0');
    await setValue(byTestId('provider-tools'), 'off');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(lastSent(add)).toEqual({
      name: 'ollama',
      kind: 'openai',
      baseUrl: 'http://localhost:11434/v1',
      model: 'llama3.2',
      options: { generation: { maxOutputTokens: 4096, reasoningEffort: 'high', thinkingBudget: 0 }, tools: false },
    });
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    expect((await backend.listProviders()).find((p) => p.name === 'ollama')?.options).toEqual({
      generation: { maxOutputTokens: 4096, reasoningEffort: 'high', thinkingBudget: 0 },
      tools: false,
    });

    // Reopened: closed again, saying how many are set, and showing the saved values.
    await fireEvent.click(byTestId('provider-edit-ollama'));
    expect(byTestId<HTMLDetailsElement>('provider-advanced').open).toBe(false);
    expect(byTestId('provider-advanced-toggle').textContent).toContain('4 set');
    expect(byTestId<HTMLInputElement>('provider-max-tokens').value).toBe('4096');
    expect(byTestId<HTMLSelectElement>('provider-reasoning-effort').value).toBe('high');
    expect(byTestId<HTMLInputElement>('provider-thinking-budget').value).toBe('0');
    expect(byTestId<HTMLSelectElement>('provider-tools').value).toBe('off');

    // Back to the defaults: an empty generation, no tools override.
    await setValue(byTestId('provider-max-tokens'), '');
    await setValue(byTestId('provider-reasoning-effort'), '');
    await setValue(byTestId('provider-thinking-budget'), ' ');
    await setValue(byTestId('provider-tools'), '');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(2));
    expect(lastSent(add).options).toEqual({ generation: {} });
  });

  it('validates the numbers before saving, opening Advanced to show the mistake', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    await openProviders();
    await fireEvent.click(byTestId('provider-add'));
    const form = byTestId('provider-form');
    await setValue(byTestId('provider-name'), 'box');
    await setValue(byTestId('provider-base-url'), 'http://localhost:8080/v1');
    // Filled in while the part is closed: on saving, the mistake must not stay hidden.
    await setValue(byTestId('provider-max-tokens'), '0');
    await setValue(byTestId('provider-thinking-budget'), '-1');
    expect(byTestId<HTMLDetailsElement>('provider-advanced').open).toBe(false);

    await fireEvent.click(byTestId('provider-save'));
    expect(add).not.toHaveBeenCalled();
    await waitFor(() => expect(byTestId<HTMLDetailsElement>('provider-advanced').open).toBe(true));
    const max = byTestId<HTMLInputElement>('provider-max-tokens');
    const budget = byTestId<HTMLInputElement>('provider-thinking-budget');
    expect(max.getAttribute('aria-invalid')).toBe('true');
    expect(budget.getAttribute('aria-invalid')).toBe('true');
    const errors = within(form).getAllByRole('alert').map((e) => e.textContent?.trim());
    expect(errors).toEqual([
      "Enter a whole number of 1 or more, or leave it empty for the provider's default.",
      'Enter a whole number of 0 or more, or leave it empty for the default (0 turns thinking off).',
    ]);
    // Each error is the field's description, in the .field-err style.
    expect(document.getElementById(max.getAttribute('aria-describedby') ?? '')?.classList.contains('field-err')).toBe(true);
    await waitFor(() => expect(document.activeElement).toBe(max));

    await setValue(max, '12.5');
    await setValue(budget, '0');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(within(form).getAllByRole('alert')).toHaveLength(1));
    expect(budget.getAttribute('aria-invalid')).toBeNull();
    expect(add).not.toHaveBeenCalled();

    await setValue(max, '8192');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(lastSent(add).options).toEqual({ generation: { maxOutputTokens: 8192, thinkingBudget: 0 } });
  });

  it('offers “Keep responses on OpenAI’s servers” for the Responses API kind only', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    await openProviders();
    await fireEvent.click(byTestId('provider-add'));
    await fireEvent.click(byTestId('provider-advanced-toggle'));
    expect(screen.queryByTestId('provider-store')).toBeNull();

    await setValue(byTestId('provider-kind'), 'openai-responses');
    const store = await screen.findByTestId<HTMLSelectElement>('provider-store');
    expect(screen.getByLabelText('Keep responses on OpenAI’s servers')).toBe(store);
    expect([...store.options].map((o) => o.textContent)).toEqual(['Default (yes)', 'Yes', 'No']);
    expect(byTestId('provider-advanced').textContent).toContain('off sends the whole conversation each time');

    for (const kind of ['anthropic', 'gemini', 'openai']) {
      await setValue(byTestId('provider-kind'), kind);
      expect(screen.queryByTestId('provider-store')).toBeNull();
    }

    await setValue(byTestId('provider-kind'), 'openai-responses');
    await setValue(byTestId('provider-store'), 'off');
    await setValue(byTestId('provider-name'), 'oai');
    await setValue(byTestId('provider-base-url'), 'https://api.openai.com/v1');
    await setValue(byTestId('provider-model'), 'gpt-4o');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(lastSent(add)).toMatchObject({ kind: 'openai-responses', options: { generation: {}, store: false } });

    // Reopened, it shows the choice; moved to another kind, the option is not sent.
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    await fireEvent.click(byTestId('provider-edit-oai'));
    expect(byTestId('provider-advanced-toggle').textContent).toContain('1 set');
    expect(byTestId<HTMLSelectElement>('provider-store').value).toBe('off');
    await setValue(byTestId('provider-kind'), 'openai');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(2));
    expect(lastSent(add).options).toEqual({ generation: {} });
  });
});

describe('Test connection', () => {
  it('shows a busy state, then the summary as success, or as a problem with Details', async () => {
    let release: () => void = () => {};
    const { backend } = await start();
    const real = backend.testProvider.bind(backend);
    const test = vi.spyOn(backend, 'testProvider').mockImplementation(async (name) => {
      await new Promise<void>((r) => (release = r));
      return real(name);
    });
    await openProviders();

    const button = within(rowOf('openai')).getByRole('button', { name: 'Test connection to openai' });
    expect(button.textContent?.trim()).toBe('Test');
    button.focus();
    expect(document.activeElement).toBe(button);
    await fireEvent.click(button);
    expect(test).toHaveBeenCalledWith('openai');
    const result = byTestId('provider-test-result-openai');
    expect(result.getAttribute('aria-live')).toBe('polite');
    await waitFor(() => expect(result.textContent).toContain('Testing the connection…'));
    expect(button.getAttribute('aria-disabled')).toBe('true');
    // A second click while it runs does not start another test; the button keeps its focus.
    await fireEvent.click(button);
    expect(test).toHaveBeenCalledTimes(1);
    expect(document.activeElement).toBe(button);

    release();
    const ok = await within(result).findByTestId('provider-test-summary');
    expect(ok.textContent).toBe("Connected, 3 models; 'gpt-4o-mini' answered and takes tools.");
    expect(ok.classList.contains('ok')).toBe(true);
    expect(within(result).queryByTestId('provider-test-details')).toBeNull();
    expect(button.getAttribute('aria-disabled')).toBeNull();

    test.mockImplementation(real);
    await fireEvent.click(within(rowOf('lmstudio')).getByRole('button', { name: 'Test connection to lmstudio' }));
    const failed = await within(rowOf('lmstudio')).findByTestId('provider-test-summary');
    expect(failed.textContent).toBe("Couldn't connect to localhost:1234 — is the server running, and is the address right?");
    expect(failed.classList.contains('bad')).toBe(true);
    const details = within(rowOf('lmstudio')).getByTestId<HTMLDetailsElement>('provider-test-details');
    expect(details.open).toBe(false);
    expect(within(details).getByText('Details').tagName).toBe('SUMMARY');
    expect(details.textContent).toContain('http://localhost:1234/v1/models');
    expect(details.textContent).toContain('Connection refused');
    // The first row's answer stays.
    expect(within(rowOf('openai')).getByTestId('provider-test-summary').textContent).toContain('Connected');
  });

  it('drops a report once the profile is saved again', async () => {
    await start();
    await openProviders();
    await fireEvent.click(byTestId('provider-test-lmstudio'));
    await within(rowOf('lmstudio')).findByTestId('provider-test-summary');
    await fireEvent.click(byTestId('provider-edit-lmstudio'));
    await setValue(byTestId('provider-base-url'), 'http://localhost:11434/v1');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    expect(within(rowOf('lmstudio')).queryByTestId('provider-test-summary')).toBeNull();
    await fireEvent.click(byTestId('provider-test-lmstudio'));
    expect((await within(rowOf('lmstudio')).findByTestId('provider-test-summary')).textContent).toBe("Connected, 2 models; 'qwen2.5-7b-instruct' answered and takes tools (it is not in the list, but it works).");
  });

  it('shows a failed call like any other error', async () => {
    await start({}, { testProvider: () => Promise.reject({ kind: 'internal', message: 'The app did not answer.', retryable: false }) });
    await openProviders();
    await fireEvent.click(byTestId('provider-test-ollama'));
    const row = rowOf('ollama');
    expect((await within(row).findByTestId('field-error')).textContent).toContain('The app did not answer.');
    expect(within(row).queryByTestId('provider-test-summary')).toBeNull();
    expect(byTestId('provider-test-ollama').getAttribute('aria-disabled')).toBeNull();
  });

  it('is what the fake says for each case: unknown profile, no key, no model', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    await expect(backend.testProvider('nope')).rejects.toMatchObject({ kind: 'config', message: expect.stringContaining("Unknown provider 'nope'.") });
    expect(await backend.testProvider(null)).toMatchObject({ ok: true, keyAccepted: true, models: 3, modelListed: true, tools: true });
    await backend.addProvider({ name: 'claude', kind: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', model: 'claude-x' }, false);
    expect(await backend.testProvider('claude')).toMatchObject({ ok: false, errorKind: 'network' });
    await backend.deleteKey('openai');
    expect(await backend.testProvider('openai')).toMatchObject({ ok: false, keyAccepted: false, errorKind: 'auth', summary: expect.stringContaining('OPENAI_API_KEY') });
    await backend.addProvider({ name: 'local', kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: null }, false);
    expect(await backend.testProvider('local')).toMatchObject({ ok: false, errorKind: null, summary: 'Connected, 2 models. Pick a default model for this profile.' });
  });
});

describe('usage in an answer footer', () => {
  it('names cache reads and writes only when there are some', () => {
    const base = { promptTokens: 1200, completionTokens: 80, reasoningTokens: 0, cachedTokens: 0 };
    expect(formatUsage(base)).toBe('1,200 in · 80 out');
    expect(formatUsage({ ...base, cachedTokens: 1000, cacheWriteTokens: 150 })).toBe('1,200 in · 80 out · 1,000 from cache · 150 cached');
  });
});
