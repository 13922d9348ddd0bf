/**
 * Settings → Providers onboarding: presets that fill the add form, the key in the same form,
 * local servers found on this computer, the automatic connection test after adding, and the
 * temperature / top-p options. Against the in-memory fake backend.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ProviderProfile } from '../src/lib/ipc/bindings';
import { createFakeBackend, type FakeOptions } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { buildProfileOptions, optionsForm, optionsSet, parseDecimal } from '../src/lib/util/providerOptions';

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

function rowOf(name: string): HTMLElement | undefined {
  return screen.queryAllByTestId('provider-row').find((r) => r.dataset.name === name);
}

function lastSent(add: { mock: { calls: unknown[][] } }): ProviderProfile {
  return add.mock.calls.at(-1)?.[0] as ProviderProfile;
}

beforeEach(() => {
  localStorage.clear();
});

describe('presets in the add form', () => {
  it('fill kind, base URL, name and model, and say whether a key is needed', async () => {
    await start();
    await openProviders();
    await fireEvent.click(byTestId('provider-add'));
    const presets = byTestId('provider-presets');
    expect(within(presets).getAllByRole('button').map((b) => b.textContent?.trim())).toEqual([
      'OpenAI',
      'OpenAI (Responses API)',
      'Anthropic (Claude)',
      'Google Gemini',
      'OpenRouter',
      'Ollama',
      'LM Studio',
      'vLLM',
      'llama.cpp server',
    ]);

    await fireEvent.click(byTestId('provider-preset-anthropic'));
    expect(byTestId<HTMLSelectElement>('provider-kind').value).toBe('anthropic');
    expect(byTestId<HTMLInputElement>('provider-base-url').value).toBe('https://api.anthropic.com/v1');
    expect(byTestId<HTMLInputElement>('provider-name').value).toBe('anthropic');
    expect(byTestId<HTMLInputElement>('provider-model').value).toBe('claude-sonnet-4-5');
    expect(byTestId('provider-preset-anthropic').getAttribute('aria-pressed')).toBe('true');
    expect(byTestId('provider-preset-note').textContent).toContain('Anthropic (Claude) needs an API key');

    // A suggested name follows the next preset; a name that is taken gets a number.
    await fireEvent.click(byTestId('provider-preset-ollama'));
    expect(byTestId<HTMLSelectElement>('provider-kind').value).toBe('openai');
    expect(byTestId<HTMLInputElement>('provider-base-url').value).toBe('http://localhost:11434/v1');
    expect(byTestId<HTMLInputElement>('provider-name').value).toBe('ollama-2');
    expect(byTestId<HTMLInputElement>('provider-model').value).toBe('');
    expect(byTestId('provider-preset-note').textContent).toContain('runs on this computer and needs no key');
    expect(screen.getByLabelText(/API key/).getAttribute('placeholder')).toBe('Not needed for a local server');

    // A name the person typed stays.
    await setValue(byTestId('provider-name'), 'mine');
    await fireEvent.click(byTestId('provider-preset-openrouter'));
    expect(byTestId<HTMLInputElement>('provider-name').value).toBe('mine');
    expect(byTestId<HTMLInputElement>('provider-base-url').value).toBe('https://openrouter.ai/api/v1');
  });

  it('saves the key typed in the form with set_key after the profile, then tests the connection', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    const setKey = vi.spyOn(backend, 'setKey');
    const test = vi.spyOn(backend, 'testProvider');
    await openProviders();
    await fireEvent.click(byTestId('provider-add'));
    await fireEvent.click(byTestId('provider-preset-gemini'));
    const key = byTestId<HTMLInputElement>('provider-key');
    expect(key.type).toBe('password');
    await setValue(key, 'AIza-demo-key-0042');
    await fireEvent.click(byTestId('provider-save'));

    await waitFor(() => expect(test).toHaveBeenCalledWith('gemini'));
    expect(lastSent(add)).toEqual({ name: 'gemini', kind: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', model: 'gemini-2.5-flash', options: { generation: {} } });
    expect(setKey).toHaveBeenCalledWith('gemini', 'AIza-demo-key-0042');
    // Profile first (the key is stored under its name), then the key, then the test.
    expect(add.mock.invocationCallOrder[0]).toBeLessThan(setKey.mock.invocationCallOrder[0] as number);
    expect(setKey.mock.invocationCallOrder[0]).toBeLessThan(test.mock.invocationCallOrder[0] as number);

    // The form closed (it had a model); the row shows the key and the test's one line.
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    const row = rowOf('gemini') as HTMLElement;
    expect(within(row).getByTestId('key-status-gemini').textContent).toContain('Key set ••••0042');
    const summary = await within(row).findByTestId('provider-test-summary');
    expect(summary.textContent).toContain("Couldn't connect to generativelanguage.googleapis.com");
    // The key is nowhere in the page.
    expect(document.body.innerHTML).not.toContain('AIza-demo-key-0042');
  });

  it('tests a new profile saved without a model in its still-open form, and not an edited one', async () => {
    const { backend } = await start();
    const test = vi.spyOn(backend, 'testProvider');
    await openProviders();
    await fireEvent.click(byTestId('provider-add'));
    await fireEvent.click(byTestId('provider-preset-ollama'));
    await fireEvent.click(byTestId('provider-save'));

    const form = await waitFor(() => within(rowOf('ollama-2') as HTMLElement).getByTestId('provider-form'));
    const summary = await within(form).findByTestId('provider-test-summary');
    expect(summary.textContent).toBe('Connected, 2 models. Pick a default model for this profile.');
    expect(test).toHaveBeenCalledTimes(1);

    await fireEvent.click(within(form).getByText('Cancel'));
    await fireEvent.click(byTestId('provider-edit-openai'));
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    expect(test).toHaveBeenCalledTimes(1);
  });
});

describe('local servers on this computer', () => {
  it('offers a detected server no profile points at, asks which of its models, and adds and tests it in one click', async () => {
    const { app, backend } = await start({ noProviders: true });
    const add = vi.spyOn(backend, 'addProvider');
    const section = await openProviders();
    const offer = await within(section).findByTestId('detected-offer');
    expect(offer.textContent).toContain('LM Studio is running on this computer — 3 models.');
    expect(offer.textContent).toContain('http://localhost:1234/v1');

    // Several models: it asks which (the server's own list), instead of taking the first.
    const addButton = within(offer).getByRole('button', { name: 'Add LM Studio as a provider' }) as HTMLButtonElement;
    expect(addButton.disabled).toBe(true);
    const which = within(offer).getByTestId('detected-model-lmstudio') as HTMLSelectElement;
    expect([...which.options].filter((o) => !o.disabled).map((o) => o.value)).toEqual(['qwen2.5-7b-instruct', 'llama-3.2-3b-instruct', 'phi-4']);
    which.value = 'phi-4';
    await fireEvent.change(which);
    expect(addButton.disabled).toBe(false);
    await fireEvent.click(addButton);
    await waitFor(() =>
      expect(add).toHaveBeenCalledWith({ name: 'lmstudio', kind: 'openai', baseUrl: 'http://localhost:1234/v1', model: 'phi-4', options: { generation: {} } }, true),
    );
    await waitFor(() => expect(screen.queryByTestId('detected-offer')).toBeNull());
    // The first-run form gave way to the new profile, which is tested at once.
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    const summary = await within(rowOf('lmstudio') as HTMLElement).findByTestId('provider-test-summary');
    expect(summary.textContent).toBe("Connected, 3 models; 'phi-4' answered and takes tools.");
    expect(summary.dataset.ok).toBe('true');
    await waitFor(() => expect(app.providers.map((p) => p.name)).toEqual(['lmstudio']));
  });

  it('offers nothing when a profile already points there, or when nothing runs', async () => {
    const { backend } = await start();
    const detect = vi.spyOn(backend, 'detectLocalServers');
    await openProviders();
    await waitFor(() => expect(detect).toHaveBeenCalled());
    expect((await detect.mock.results[0]?.value)?.[0]?.profile).toBe('lmstudio');
    expect(screen.queryByTestId('detected-offer')).toBeNull();
  });

  it('offers nothing when no local server answers, and a failed detection is not shown', async () => {
    await start({ noProviders: true, noLocalServers: true });
    const section = await openProviders();
    await within(section).findByTestId('provider-form');
    expect(screen.queryByTestId('detected-offer')).toBeNull();
  });

  it('does not show an error when detection fails', async () => {
    await start({}, { detectLocalServers: () => Promise.reject({ kind: 'internal', message: 'boom', retryable: false }) });
    const section = await openProviders();
    await new Promise((r) => setTimeout(r, 0));
    expect(within(section).queryByTestId('detected-offer')).toBeNull();
    expect(within(section).queryByText(/boom/)).toBeNull();
  });
});

describe('temperature and top-p', () => {
  it('read and write: decimals from 0 to 2 and 0 to 1, empty for the default', () => {
    expect(parseDecimal('0.7', 2)).toEqual({ value: 0.7 });
    expect(parseDecimal(' .5 ', 1)).toEqual({ value: 0.5 });
    expect(parseDecimal('0,9', 1)).toEqual({ value: 0.9 });
    expect(parseDecimal('2', 2)).toEqual({ value: 2 });
    expect(parseDecimal('', 2)).toEqual({ value: null });
    expect(parseDecimal(undefined, 2)).toEqual({ value: null });
    for (const bad of ['2.01', '-0.1', 'abc', '1e0', '0.5.5', 'NaN']) expect(parseDecimal(bad, 2)).toHaveProperty('error');
    expect(parseDecimal('1.5', 1)).toHaveProperty('error');

    const f = { ...optionsForm(), temperature: '0.3', topP: '1' };
    expect(buildProfileOptions(f, 'openai')).toEqual({ options: { generation: { temperature: 0.3, topP: 1 } } });
    expect(optionsSet(f, 'openai')).toBe(2);
    expect(buildProfileOptions({ ...optionsForm(), temperature: '3', topP: '-1' }, 'openai')).toEqual({
      errors: {
        temperature: "Enter a number from 0 to 2 (like 0.7), or leave it empty for the model's default.",
        topP: "Enter a number from 0 to 1 (like 0.7), or leave it empty for the model's default.",
      },
    });
    const back = optionsForm({ generation: { temperature: 0, topP: 0.95 } });
    expect(back.temperature).toBe('0');
    expect(back.topP).toBe('0.95');
    expect(buildProfileOptions(back, 'openai')).toEqual({ options: { generation: { temperature: 0, topP: 0.95 } } });
  });

  it('are validated in the form (Advanced opens on a mistake) and round-trip through the profile', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    await openProviders();
    await fireEvent.click(byTestId('provider-edit-ollama'));
    await setValue(byTestId('provider-temperature'), '2.5');
    await setValue(byTestId('provider-top-p'), '1.2');
    expect(byTestId<HTMLDetailsElement>('provider-advanced').open).toBe(false);
    await fireEvent.click(byTestId('provider-save'));
    expect(add).not.toHaveBeenCalled();
    await waitFor(() => expect(byTestId<HTMLDetailsElement>('provider-advanced').open).toBe(true));
    const temperature = byTestId<HTMLInputElement>('provider-temperature');
    expect(temperature.getAttribute('aria-invalid')).toBe('true');
    expect(byTestId('provider-top-p').getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(temperature.getAttribute('aria-describedby') ?? '')?.textContent).toContain('Enter a number from 0 to 2');
    await waitFor(() => expect(document.activeElement).toBe(temperature));

    await setValue(temperature, '0.7');
    await setValue(byTestId('provider-top-p'), '0.9');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(lastSent(add).options).toEqual({ generation: { temperature: 0.7, topP: 0.9 } });
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    expect((await backend.listProviders()).find((p) => p.name === 'ollama')?.options?.generation).toEqual({ temperature: 0.7, topP: 0.9 });

    await fireEvent.click(byTestId('provider-edit-ollama'));
    expect(byTestId('provider-advanced-toggle').textContent).toContain('2 set');
    expect(byTestId<HTMLInputElement>('provider-temperature').value).toBe('0.7');
    expect(byTestId<HTMLInputElement>('provider-top-p').value).toBe('0.9');
    await setValue(byTestId('provider-temperature'), '');
    await setValue(byTestId('provider-top-p'), ' ');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(2));
    expect(lastSent(add).options).toEqual({ generation: {} });
  });
});

describe('a failed connection test', () => {
  it('offers the models the server has; one click makes one the default and tests again', async () => {
    const report = { ok: false, summary: "The server has no model 'gpt-9'.", keyAccepted: true, models: 3, modelListed: false, tools: null, errorKind: 'notFound' as const, detail: null };
    const { backend } = await start();
    const real = backend.testProvider.bind(backend);
    const test = vi.spyOn(backend, 'testProvider').mockResolvedValueOnce(report).mockImplementation(real);
    const add = vi.spyOn(backend, 'addProvider');
    await openProviders();
    await fireEvent.click(screen.getByTestId('provider-test-openai'));
    const offer = await screen.findByTestId('provider-model-offer');
    const models = await within(offer).findAllByTestId('provider-model-offer-model');
    expect(models.map((m) => m.dataset.model)).toEqual(['gpt-4o', 'o3-mini']); // not the profile's own
    await fireEvent.click(models[0] as HTMLElement);
    await waitFor(() => expect(add).toHaveBeenCalledWith(expect.objectContaining({ name: 'openai', model: 'gpt-4o' }), true));
    await waitFor(() => expect(test).toHaveBeenCalledTimes(2));
    await waitFor(() => expect(screen.queryByTestId('provider-model-offer')).toBeNull());
  });
});
