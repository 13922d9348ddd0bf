/**
 * Settings → Data's "Open folder" after an export, and the Chats section (how new chats get their
 * title), saved through the settings model like the other sections.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import ChatsSection from '../src/lib/components/settings/ChatsSection.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { Settings } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { SettingsModel } from '../src/lib/state/settings.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

beforeEach(() => {
  localStorage.clear();
});

describe('data', () => {
  async function exportEverything(patch: Partial<Backend> = {}) {
    const backend: Backend = { ...createFakeBackend({ tickMs: 0, empty: true }), ...patch };
    const app = new AppState(backend, { schedule });
    render(App, { props: { app } });
    await app.init();
    app.openSettings('data');
    await screen.findByTestId('settings-section-data');
    expect(screen.queryByTestId('export-open-folder')).toBeNull();
    await fireEvent.click(screen.getByTestId('export-all'));
    await screen.findByTestId('export-path');
    return backend;
  }

  it('offers "Open folder" with the path once "Export all" succeeded', async () => {
    const backend = await exportEverything();
    const open = vi.spyOn(backend, 'openExportsFolder');
    const button = screen.getByTestId('export-open-folder');
    expect(button.textContent?.trim()).toBe('Open folder');
    await fireEvent.click(button);
    expect(open).toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId('field-error')).toBeNull();
  });

  it('says why the folder could not be opened', async () => {
    await exportEverything({ openExportsFolder: () => Promise.reject({ kind: 'io', message: 'No file manager was found.', retryable: false }) });
    await fireEvent.click(screen.getByTestId('export-open-folder'));
    expect((await screen.findByTestId('field-error')).textContent).toContain('No file manager was found.');
  });
});

describe('the Chats section', () => {
  async function section(patch: Partial<Backend> = {}) {
    const backend: Backend = { ...createFakeBackend({ tickMs: 0, empty: true }), ...patch };
    const model = new SettingsModel({ api: backend, loadProviders: async () => {}, loadTools: async () => {} });
    await model.load();
    render(ChatsSection, { props: { model } });
    return { backend, model };
  }

  it('shows the title choice and saves it in the settings’ chats', async () => {
    const update = vi.fn();
    const { backend, model } = await section();
    const real = backend.updateSettings;
    backend.updateSettings = (s) => {
      update(s);
      return real(s);
    };
    const el = screen.getByTestId('settings-section-chats');
    const byModel = within(el).getByLabelText(/Name new chats with their model/) as HTMLInputElement;
    const byFirstLine = within(el).getByLabelText(/Use the first line of the first message/) as HTMLInputElement;
    expect(byModel.checked).toBe(true);
    expect(byFirstLine.checked).toBe(false);

    await fireEvent.click(byFirstLine);
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    const sent = update.mock.calls[0]?.[0] as Settings;
    expect(sent.chats).toEqual({ titles: 'firstLine', instructions: '' });
    // Everything else is sent as it was.
    expect(sent.web).toEqual(model.settings?.web);
    expect(await within(el).findByTestId('saved-note')).toBeTruthy();
    expect((await backend.getSettings()).chats.titles).toBe('firstLine');
    expect(byFirstLine.checked).toBe(true);

    await fireEvent.click(byModel);
    await waitFor(() => expect(update).toHaveBeenCalledTimes(2));
    expect((await backend.getSettings()).chats.titles).toBe('model');
  });

  it('shows a rejected change next to the choice and rolls it back', async () => {
    const { model } = await section({ updateSettings: () => Promise.reject({ kind: 'config', message: "unknown title mode 'firstLine'", retryable: false }) });
    const el = screen.getByTestId('settings-section-chats');
    await fireEvent.click(within(el).getByTestId('chat-titles-firstLine'));
    expect((await within(el).findByTestId('field-error')).textContent).toContain("unknown title mode 'firstLine'");
    expect(model.settings?.chats.titles).toBe('model');
    await waitFor(() => expect((within(el).getByTestId('chat-titles-model') as HTMLInputElement).checked).toBe(true));
  });
});
