/**
 * The settings screen against the in-memory fake backend: what a person does and what the shell
 * receives. Keys get the closest look: a key value reaches set_key and nothing else.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { Settings } from '../src/lib/ipc/bindings';
import { createFakeBackend, FAKE_KEYCHAIN_PROBLEM, type FakeOptions } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(opts: FakeOptions = {}, patch: Partial<Backend> = {}) {
  const base = createFakeBackend({ tickMs: 0, empty: true, ...opts });
  const backend: Backend = { ...base, ...patch };
  const app = new AppState(backend, { schedule });
  const view = render(App, { props: { app } });
  await app.init();
  return { app, view, backend };
}

/** Opens Settings from the sidebar's gear and goes to a section. */
async function openSection(id: string): Promise<HTMLElement> {
  if (!screen.queryByTestId('settings')) await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId(`settings-nav-${id}`));
  return screen.findByTestId(`settings-section-${id}`);
}

function byTestId<T extends HTMLElement = HTMLElement>(id: string): T {
  return screen.getByTestId(id) as T;
}

async function setValue(el: HTMLInputElement | HTMLSelectElement, value: string) {
  el.value = value;
  await fireEvent.input(el);
  await fireEvent.change(el);
}

beforeEach(() => {
  localStorage.clear();
});

describe('the settings screen', () => {
  it('opens from the gear and with Ctrl+, and closes with Esc and the close button', async () => {
    const { app } = await start();
    expect(screen.queryByTestId('settings')).toBeNull();

    await fireEvent.click(byTestId('open-settings'));
    expect(await screen.findByTestId('settings-section-providers')).toBeTruthy();
    const nav = byTestId('settings-nav');
    expect(within(nav).getAllByRole('button').map((b) => b.textContent?.trim())).toEqual(['Providers', 'Keys', 'Search & web tools', 'Tools', 'Your tools', 'MCP servers', 'Agents', 'Limits', 'Chats', 'Appearance', 'Data']);
    // The chat stays mounted (a draft is not lost), hidden.
    expect((byTestId('composer-input').closest('.chat') as HTMLElement).hidden).toBe(true);

    await fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByTestId('settings')).toBeNull();

    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    expect(screen.getByTestId('settings')).toBeTruthy();
    await fireEvent.click(byTestId('close-settings'));
    expect(screen.queryByTestId('settings')).toBeNull();

    app.openSettings('data');
    expect(await screen.findByTestId('settings-section-data')).toBeTruthy();
  });

  it('exempts a tool from the egress question through update_settings, and ends the exemption', async () => {
    const { backend } = await start();
    const update = vi.spyOn(backend, 'updateSettings');
    await openSection('tools');
    const box = byTestId<HTMLInputElement>('tool-egress-exempt-web_fetch');
    expect(box.checked).toBe(false);
    await fireEvent.click(box);
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect((update.mock.calls[0]?.[0] as Settings).tools.egressExempt).toEqual(['web_fetch']);
    await waitFor(() => expect(byTestId<HTMLInputElement>('tool-egress-exempt-web_fetch').checked).toBe(true));
    await fireEvent.click(byTestId<HTMLInputElement>('tool-egress-exempt-web_fetch'));
    await waitFor(() => expect(update).toHaveBeenCalledTimes(2));
    expect((update.mock.calls[1]?.[0] as Settings).tools.egressExempt).toEqual([]);
  });

  it('saves a tool switch and an approval with update_settings, and the chat sees it', async () => {
    const { app, backend } = await start();
    const update = vi.spyOn(backend, 'updateSettings');
    await openSection('tools');

    const toggle = byTestId<HTMLInputElement>('tool-enabled-web_fetch');
    expect(toggle.checked).toBe(true);
    expect(byTestId<HTMLInputElement>('tool-enabled-shell').checked).toBe(false);
    await fireEvent.click(toggle);

    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    const sent = update.mock.calls[0]?.[0] as Settings;
    expect(sent).toEqual({
      defaultProvider: 'openai',
      tools: { disabled: ['shell', 'web_fetch'], approval: {}, egressExempt: [] },
      limits: { maxIterations: null, maxToolCallsPerRound: null, toolTimeoutSecs: null, idleTimeoutSecs: null, compactAtPercent: null },
      retry: { maxRetries: null, baseDelayMs: null },
      web: { searchBackend: 'tavily', searxngUrl: null, allowLocalAddresses: false },
      chats: { titles: 'model', instructions: '' },
    });
    const row = screen.getAllByTestId('settings-tool-row').find((r) => r.dataset.toolName === 'web_fetch') as HTMLElement;
    expect((await within(row).findByTestId('saved-note')).textContent).toContain('Saved');
    await waitFor(() => expect(app.tools.find((t) => t.name === 'web_fetch')?.enabled).toBe(false));

    await setValue(byTestId<HTMLSelectElement>('tool-approval-get_time'), 'deny');
    await waitFor(() => expect(update).toHaveBeenCalledTimes(2));
    expect((update.mock.calls[1]?.[0] as Settings).tools).toEqual({ disabled: ['shell', 'web_fetch'], approval: { get_time: 'deny' }, egressExempt: [] });
    await waitFor(() => expect(app.tools.find((t) => t.name === 'get_time')?.approval).toBe('deny'));
    expect(byTestId<HTMLSelectElement>('tool-approval-get_time').value).toBe('deny');
  });

  it('shows the lint findings of a tool as a warning badge with their reasons', async () => {
    const reason = 'the description contains "<important>", text addressed to the model rather than about the tool';
    const { backend } = await start();
    const listTools = backend.listTools.bind(backend);
    backend.listTools = async (...args) =>
      (await listTools(...args)).map((t) => (t.name === 'get_time' ? { ...t, findings: [{ kind: 'hiddenInstructions', reason }] } : t));
    await openSection('tools');
    const row = (await screen.findAllByTestId('settings-tool-row')).find((r) => r.dataset.toolName === 'get_time') as HTMLElement;
    const badge = await within(row).findByTestId('tool-findings');
    expect(badge.textContent).toContain('1 warning');
    expect(badge.textContent).toContain(reason);
    const plain = screen.getAllByTestId('settings-tool-row').find((r) => r.dataset.toolName === 'web_fetch') as HTMLElement;
    expect(within(plain).queryByTestId('tool-findings')).toBeNull();
  });

  it('shows a rejected change inline with the backend message and rolls it back', async () => {
    const { backend } = await start({}, {
      updateSettings: () => Promise.reject({ kind: 'config', message: 'The settings database is read-only.', retryable: false }),
    });
    await openSection('tools');
    await fireEvent.click(byTestId('tool-enabled-get_time'));
    const row = screen.getAllByTestId('settings-tool-row').find((r) => r.dataset.toolName === 'get_time') as HTMLElement;
    expect((await within(row).findByTestId('field-error')).textContent).toContain('The settings database is read-only.');
    expect(byTestId<HTMLInputElement>('tool-enabled-get_time').checked).toBe(true);
    expect((await backend.getSettings()).tools.disabled).toEqual(['shell']);
  });

  it('switches search to SearXNG only with a URL, and shows the backend message for a bad one', async () => {
    const { backend } = await start();
    const update = vi.spyOn(backend, 'updateSettings');
    await openSection('web');

    await fireEvent.click(byTestId('web-backend-searxng'));
    // Not saved yet: the backend refuses SearXNG without a URL.
    expect(update).not.toHaveBeenCalled();
    const url = byTestId<HTMLInputElement>('searxng-url');
    url.value = 'searx.local';
    await fireEvent.input(url);
    await fireEvent.click(byTestId('searxng-save'));
    const error = await screen.findByTestId('field-error');
    expect(error.textContent).toContain("the SearXNG URL 'searx.local' is not an http:// or https:// URL");
    expect(url.getAttribute('aria-invalid')).toBe('true');

    url.value = 'http://localhost:8888';
    await fireEvent.input(url);
    await fireEvent.click(byTestId('searxng-save'));
    await waitFor(() => expect(screen.queryByTestId('field-error')).toBeNull());
    expect((update.mock.calls.at(-1)?.[0] as Settings).web).toEqual({ searchBackend: 'searxng', searxngUrl: 'http://localhost:8888', allowLocalAddresses: false });
    expect((await backend.getSettings()).web.searchBackend).toBe('searxng');

    await fireEvent.click(byTestId('web-allow-local'));
    await waitFor(() => expect((update.mock.calls.at(-1)?.[0] as Settings).web.allowLocalAddresses).toBe(true));
    await fireEvent.click(byTestId('web-backend-exa'));
    await waitFor(() => expect((update.mock.calls.at(-1)?.[0] as Settings).web.searchBackend).toBe('exa'));
  });

  it('validates limits before saving: out of range shows an error and saves nothing', async () => {
    const { backend } = await start();
    const update = vi.spyOn(backend, 'updateSettings');
    await openSection('limits');
    const field = byTestId<HTMLInputElement>('limit-max-iterations');
    expect(field.placeholder).toBe('10');

    await setValue(field, '99');
    expect((await screen.findByTestId('field-error')).textContent).toContain('Enter a whole number from 1 to 50');
    expect(field.getAttribute('aria-invalid')).toBe('true');
    await setValue(field, '0');
    expect(screen.getByTestId('field-error')).toBeTruthy();
    expect(update).not.toHaveBeenCalled();

    await setValue(field, '20');
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect((update.mock.calls[0]?.[0] as Settings).limits.maxIterations).toBe(20);
    expect(screen.queryByTestId('field-error')).toBeNull();

    await setValue(byTestId<HTMLInputElement>('limit-tool-timeout'), '601');
    expect((await screen.findByTestId('field-error')).textContent).toContain('from 1 to 600');
    await setValue(byTestId<HTMLInputElement>('limit-tool-timeout'), '120');
    await setValue(byTestId<HTMLInputElement>('limit-max-retries'), '0');
    await waitFor(() => expect(update).toHaveBeenCalledTimes(3));
    expect((update.mock.calls[2]?.[0] as Settings).retry.maxRetries).toBe(0);

    // Empty means the default.
    await setValue(field, '');
    await waitFor(() => expect(update).toHaveBeenCalledTimes(4));
    const last = update.mock.calls[3]?.[0] as Settings;
    expect(last.limits).toEqual({ maxIterations: null, maxToolCallsPerRound: null, toolTimeoutSecs: 120, idleTimeoutSecs: null, compactAtPercent: null });
  });
});

describe('providers', () => {
  it('adds a profile, fetches its models into a select, and the model picker gets it', async () => {
    const { app, backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    await openSection('providers');
    await fireEvent.click(byTestId('provider-add'));
    const form = byTestId('provider-form');
    expect(byTestId<HTMLInputElement>('provider-base-url').placeholder).toBe('http://localhost:11434/v1');
    expect(within(form).getByRole('option', { name: /OpenAI \/ OpenAI-compatible \(Ollama, LM Studio/ })).toBeTruthy();
    expect(byTestId<HTMLButtonElement>('provider-fetch-models').disabled).toBe(true);

    // Checked before anything is sent.
    await setValue(byTestId('provider-name'), 'my box');
    await setValue(byTestId('provider-base-url'), 'localhost:11434');
    await fireEvent.click(byTestId('provider-save'));
    expect(within(form).getByText('Use letters, digits, "-" and "_" only (at most 64).')).toBeTruthy();
    expect(within(form).getByText('The base URL must start with http:// or https://.')).toBeTruthy();
    expect(add).not.toHaveBeenCalled();

    await setValue(byTestId('provider-name'), 'local');
    await setValue(byTestId('provider-base-url'), 'http://localhost:11434/v1');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledWith({ name: 'local', kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: null, options: { generation: {} } }, false));

    // Saved without a model: the form stays open on the saved profile so its models can be fetched.
    const saved = await waitFor(() => {
      const row = screen.getAllByTestId('provider-row').find((r) => r.dataset.name === 'local') as HTMLElement;
      return within(row).getByTestId('provider-form');
    });
    expect(screen.getAllByTestId('provider-form')).toHaveLength(1);
    expect((within(saved).getByTestId('provider-fetch-models') as HTMLButtonElement).disabled).toBe(false);
    await fireEvent.click(within(saved).getByTestId('provider-fetch-models'));
    const select = await screen.findByTestId<HTMLSelectElement>('provider-model-select');
    expect([...select.options].map((o) => o.value)).toEqual(['llama3.2', 'qwen2.5-coder:7b', '\u0000other']);
    await setValue(select, 'qwen2.5-coder:7b');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenLastCalledWith({ name: 'local', kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'qwen2.5-coder:7b', options: { generation: {} } }, false));

    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    const row = screen.getAllByTestId('provider-row').find((r) => r.dataset.name === 'local') as HTMLElement;
    expect(row.textContent).toContain('qwen2.5-coder:7b');
    expect(within(row).getByTestId('key-status-local').textContent).toBe('No key');
    await waitFor(() => expect(app.providers.map((p) => p.name)).toContain('local'));
    expect(app.models.local).toContain('qwen2.5-coder:7b');
  });

  it('falls back to a typed model when the models cannot be fetched, and shows backend errors inline', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addProvider');
    await openSection('providers');
    await fireEvent.click(byTestId('provider-edit-lmstudio'));
    expect(byTestId<HTMLInputElement>('provider-name').readOnly).toBe(true);
    await fireEvent.click(byTestId('provider-fetch-models'));
    expect((await screen.findByRole('alert')).textContent).toContain('Could not list the models of lmstudio: connection refused. Type the model name instead.');
    expect(screen.queryByTestId('provider-model-select')).toBeNull();
    await setValue(byTestId('provider-model'), 'phi-4');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledWith({ name: 'lmstudio', kind: 'openai', baseUrl: 'http://localhost:1234/v1', model: 'phi-4', options: { generation: {} } }, false));
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());

    add.mockRejectedValueOnce({ kind: 'config', message: "The base URL 'ftp://x' must start with http:// or https://.", retryable: false });
    await fireEvent.click(byTestId('provider-edit-ollama'));
    await fireEvent.click(byTestId('provider-save'));
    const form = byTestId('provider-form');
    expect((await within(form).findByRole('alert')).textContent).toContain("The base URL 'ftp://x' must start with http:// or https://.");
    expect(byTestId('provider-base-url').getAttribute('aria-invalid')).toBe('true');
  });

  it('edits, makes default and deletes (after confirming) a profile', async () => {
    const { app, backend } = await start();
    const update = vi.spyOn(backend, 'updateSettings');
    const remove = vi.spyOn(backend, 'removeProvider');
    await openSection('providers');

    await fireEvent.click(byTestId('provider-edit-ollama'));
    await setValue(byTestId('provider-model'), 'qwen2.5-coder:7b');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    const rowOf = (name: string) => screen.getAllByTestId('provider-row').find((r) => r.dataset.name === name) as HTMLElement;
    expect(rowOf('ollama').textContent).toContain('qwen2.5-coder:7b');

    await fireEvent.click(byTestId('provider-make-default-ollama'));
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect((update.mock.calls[0]?.[0] as Settings).defaultProvider).toBe('ollama');
    await waitFor(() => expect(within(rowOf('ollama')).queryByTestId('provider-default-marker')).toBeTruthy());
    expect(within(rowOf('openai')).queryByTestId('provider-default-marker')).toBeNull();

    await fireEvent.click(byTestId('provider-delete-lmstudio'));
    const dialog = await screen.findByTestId('confirm-dialog');
    expect(dialog.textContent).toContain('lmstudio');
    await fireEvent.click(within(dialog).getByText('Cancel'));
    expect(remove).not.toHaveBeenCalled();
    await fireEvent.click(byTestId('provider-delete-lmstudio'));
    await fireEvent.click(within(await screen.findByTestId('confirm-dialog')).getByTestId('confirm-delete'));
    expect(remove).toHaveBeenCalledWith('lmstudio');
    await waitFor(() => expect(screen.getAllByTestId('provider-row').map((r) => r.dataset.name)).toEqual(['openai', 'ollama']));
    await waitFor(() => expect(app.providers.map((p) => p.name)).toEqual(['openai', 'ollama']));
    expect((await backend.listKeys()).map((k) => k.name)).toEqual(['openai', 'ollama', 'tavily', 'exa']);
  });

  it('shows the first-run card when there is no provider, opening Settings → Providers', async () => {
    await start({ noProviders: true });
    const button = await screen.findByTestId('first-run-add-provider');
    expect(screen.getByTestId('first-run').textContent).toContain('Add a provider to start');
    await fireEvent.click(button);
    const section = await screen.findByTestId('settings-section-providers');
    expect(within(section).getByTestId('provider-form')).toBeTruthy();
    expect(byTestId<HTMLInputElement>('provider-make-default').checked).toBe(true);
  });
});

describe('keys', () => {
  /** Every backend method spied, to prove where a key value goes. */
  function spyAll(backend: Backend): MockInstance[] {
    return (Object.keys(backend) as (keyof Backend)[]).map((k) => vi.spyOn(backend, k));
  }

  it('sets a key: the input is cleared, the status shows ••••last4, and the value goes to set_key only', async () => {
    const { backend } = await start();
    const spies = spyAll(backend);
    const secret = 'sk-test-SECRET-value-9z8y';
    await openSection('keys');

    const input = byTestId<HTMLInputElement>('key-input-ollama');
    expect(input.type).toBe('password');
    expect(input.autocomplete).toBe('off');
    expect(byTestId('key-status-ollama').textContent).toBe('No key');
    await setValue(input, secret);
    await fireEvent.click(byTestId('key-save-ollama'));

    expect(input.value).toBe('');
    await waitFor(() => expect(byTestId('key-status-ollama').textContent).toBe('Key set ••••9z8y'));
    expect(backend.setKey).toHaveBeenCalledWith('ollama', secret);
    expect(document.body.innerHTML).not.toContain(secret);
    expect(document.body.textContent).not.toContain(secret);
    expect(JSON.stringify({ ...localStorage })).not.toContain(secret);
    for (const spy of spies) {
      if (spy === (backend.setKey as unknown)) continue;
      expect(JSON.stringify(spy.mock.calls)).not.toContain(secret);
    }
    for (const spy of spies) {
      for (const result of spy.mock.results) {
        const value: unknown = result.value instanceof Promise ? await result.value.catch(() => null) : result.value;
        expect(JSON.stringify(value ?? null)).not.toContain(secret);
      }
    }

    // The new key is tested at once, with the one-line verdict of "Test connection" next to it.
    await waitFor(() => expect(backend.testProvider).toHaveBeenCalledWith('ollama'));
    const verdict = await waitFor(() => within(byTestId('provider-test-result-ollama')).getByTestId('provider-test-summary'));
    // The same words Test connection shows for this profile.
    const report = await vi.mocked(backend.testProvider).mock.results[0]!.value;
    expect(report.summary).not.toBe('');
    expect(verdict.textContent?.trim()).toBe(report.summary);

    // Delete asks first: Cancel keeps the key, "Delete key" deletes it.
    await fireEvent.click(byTestId('key-delete-ollama'));
    const dialog = await screen.findByTestId('confirm-dialog');
    expect(dialog.textContent).toContain('Delete the key for');
    expect(backend.deleteKey).not.toHaveBeenCalled();
    await fireEvent.click(within(dialog).getByText('Cancel'));
    expect(screen.queryByTestId('confirm-dialog')).toBeNull();
    expect(backend.deleteKey).not.toHaveBeenCalled();
    await fireEvent.click(byTestId('key-delete-ollama'));
    await fireEvent.click(within(await screen.findByTestId('confirm-dialog')).getByTestId('confirm-delete'));
    expect(backend.deleteKey).toHaveBeenCalledWith('ollama');
    await waitFor(() => expect(byTestId('key-status-ollama').textContent).toBe('No key'));
    expect(screen.queryByTestId('key-delete-ollama')).toBeNull();
  });

  it('sets and replaces a provider key from its row in Providers', async () => {
    const { backend } = await start();
    const set = vi.spyOn(backend, 'setKey');
    await openSection('providers');
    expect(byTestId('key-status-openai').textContent).toBe('Key set ••••7f3a');
    expect(screen.queryByTestId('key-input-openai')).toBeNull();
    await fireEvent.click(byTestId('key-edit-openai'));
    const input = byTestId<HTMLInputElement>('key-input-openai');
    await setValue(input, 'sk-replacement-key-abcd');
    await fireEvent.submit(input.form as HTMLFormElement);
    expect(set).toHaveBeenCalledWith('openai', 'sk-replacement-key-abcd');
    await waitFor(() => expect(byTestId('key-status-openai').textContent).toBe('Key set ••••abcd'));
    expect(screen.queryByTestId('key-input-openai')).toBeNull();
    expect(document.body.innerHTML).not.toContain('sk-replacement-key-abcd');
  });

  it('explains an unavailable keychain and offers environment variables, memory, or another try', async () => {
    const { backend } = await start({ keychain: 'problem' });
    const fallback = vi.spyOn(backend, 'useKeyFallback');
    await fireEvent.click(byTestId('open-settings'));
    // The nav flags the Keys section.
    await waitFor(() => expect(within(byTestId('settings-nav-keys')).queryByLabelText('needs attention')).toBeTruthy());
    await openSection('keys');

    const box = byTestId('keychain-problem');
    expect(box.textContent).toContain(FAKE_KEYCHAIN_PROBLEM);
    expect(box.textContent).not.toMatch(/\bfile\b.*(save|store) keys/i);
    // Environment variables: read-only, each key's variable shown.
    expect(byTestId<HTMLInputElement>('key-input-tavily').disabled).toBe(true);
    expect(screen.getByTestId('settings-section-keys').textContent).toContain('SWITCHBOARD_KEY_TAVILY');
    expect(byTestId('key-status-exa').textContent).toBe('Key set ••••9c1d');

    await fireEvent.click(within(box).getByTestId('keychain-use-memory'));
    expect(fallback).toHaveBeenLastCalledWith('memory');
    await waitFor(() => expect(byTestId<HTMLInputElement>('key-input-tavily').disabled).toBe(false));
    expect(byTestId('key-mode').dataset.mode).toBe('memory');
    expect(within(box).getByTestId('keychain-use-memory').getAttribute('aria-pressed')).toBe('true');

    await fireEvent.click(within(box).getByTestId('keychain-use-environment'));
    expect(fallback).toHaveBeenLastCalledWith('environment');
    await waitFor(() => expect(byTestId<HTMLInputElement>('key-input-tavily').disabled).toBe(true));

    await fireEvent.click(within(box).getByTestId('keychain-retry'));
    expect(fallback).toHaveBeenLastCalledWith('keychain');
    expect((await within(box).findByTestId('field-error')).textContent).toContain('The keychain is still unavailable');
    expect(byTestId('keychain-problem')).toBeTruthy();
  });

  it('asks again while the keychain is still being probed at start-up', async () => {
    const { backend } = await start({ keychain: 'pending', probeMs: 300 });
    const status = vi.spyOn(backend, 'keychainStatus');
    await openSection('keys');
    expect(await screen.findByText(/Checking the system keychain/)).toBeTruthy();
    expect(byTestId<HTMLInputElement>('key-input-tavily').disabled).toBe(true);
    await waitFor(() => expect(byTestId<HTMLInputElement>('key-input-tavily').disabled).toBe(false), { timeout: 3000 });
    expect(status.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(byTestId('key-mode').dataset.mode).toBe('keychain');
    expect(screen.queryByTestId('keychain-problem')).toBeNull();
  });
});

describe('data', () => {
  it('shows where the data is and the path of an export', async () => {
    const { backend } = await start();
    const exportAll = vi.spyOn(backend, 'exportAll');
    await openSection('data');
    expect(byTestId('data-database').textContent).toBe('/home/you/.local/share/switchboard/switchboard.db');
    expect(byTestId('data-dir').textContent).toBe('/home/you/.local/share/switchboard');
    await fireEvent.click(byTestId('export-all'));
    expect(exportAll).toHaveBeenCalledTimes(1);
    expect((await screen.findByTestId('export-path')).textContent).toMatch(/^\/home\/you\/\.local\/share\/switchboard\/exports\/switchboard-export-\d+\.json$/);
  });
});
