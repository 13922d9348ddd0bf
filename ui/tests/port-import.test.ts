/**
 * Settings → Data → Import conversations: the native dialog's file is previewed ("3 conversations,
 * 1 already imported") and nothing is written until the person confirms; a cancelled dialog says
 * nothing; a bad file says why. Exports whose save dialog was cancelled say nothing either.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import DataSection from '../src/lib/components/settings/DataSection.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { SettingsModel } from '../src/lib/state/settings.svelte';

beforeEach(() => {
  localStorage.clear();
});

async function section(patch: Partial<Backend> = {}) {
  const backend: Backend = { ...createFakeBackend({ tickMs: 0, empty: true }), ...patch };
  const refreshConversations = vi.fn(async () => {});
  const model = new SettingsModel({ api: backend, loadProviders: async () => {}, loadTools: async () => {}, refreshConversations });
  await model.load();
  render(DataSection, { props: { model } });
  return { backend, model, refreshConversations };
}

const cancelled = { kind: 'cancelled', message: 'No file was chosen.', retryable: false };

describe('importing conversations', () => {
  it('previews the picked file and writes only after the person confirms', async () => {
    const { backend, refreshConversations } = await section();
    const importing = vi.spyOn(backend, 'importConversations');
    await fireEvent.click(screen.getByTestId('import-conversations'));
    expect((await screen.findByTestId('import-summary')).textContent).toBe('ChatGPT export: 3 conversations');
    expect(screen.getByTestId('import-titles').textContent).toContain('Tokyo trip 🗾');
    expect(importing).not.toHaveBeenCalled();
    const confirm = screen.getByTestId('import-confirm');
    expect(confirm.textContent?.trim()).toBe('Import 3 conversations');
    await fireEvent.click(confirm);
    expect((await screen.findByTestId('import-done')).textContent).toContain('Imported 3 conversations');
    expect(importing).toHaveBeenCalledWith('pick-import');
    expect(refreshConversations).toHaveBeenCalledTimes(1);
    expect((await backend.listConversations()).length).toBe(3);

    // The same file again: the preview says so and there is nothing to confirm.
    await fireEvent.click(screen.getByTestId('import-conversations'));
    expect((await screen.findByTestId('import-summary')).textContent).toBe('ChatGPT export: 3 conversations, 3 already imported');
    const none = screen.getByTestId('import-confirm') as HTMLButtonElement;
    expect(none.disabled).toBe(true);
    expect(none.textContent?.trim()).toBe('Nothing new to import');
    await fireEvent.click(screen.getByTestId('import-cancel'));
    expect(screen.queryByTestId('import-preview')).toBeNull();
    expect(importing).toHaveBeenCalledTimes(1);
  });

  it('shows how many are already imported and imports only the rest', async () => {
    const { backend } = await section();
    // One of the three came in earlier.
    const real = backend.previewConversationImport;
    backend.previewConversationImport = async () => {
      const out = await real();
      return { ...out, preview: { ...out.preview, alreadyImported: 1, titles: out.preview.titles.slice(1), summary: 'ChatGPT export: 3 conversations, 1 already imported' } };
    };
    await fireEvent.click(screen.getByTestId('import-conversations'));
    expect((await screen.findByTestId('import-summary')).textContent).toBe('ChatGPT export: 3 conversations, 1 already imported');
    expect(screen.getByTestId('import-confirm').textContent?.trim()).toBe('Import 2 conversations');
  });

  it('lists the conversations that cannot be imported, with why, before and after importing the others', async () => {
    const { backend } = await section();
    const refused = [
      { id: 'c-9', title: 'Broken chat', reason: "message 'm2' follows 'gone', which does not exist" },
      { id: null, title: 'conversation #5', reason: 'it is not in ChatGPT\'s format: missing field `mapping`' },
    ];
    const preview = backend.previewConversationImport;
    backend.previewConversationImport = async () => {
      const out = await preview();
      return { ...out, preview: { ...out.preview, conversations: 5, refused, summary: 'ChatGPT export: 5 conversations, 2 cannot be imported' } };
    };
    const run = backend.importConversations;
    backend.importConversations = async (pick) => ({ ...(await run(pick)), refused, summary: 'Imported 3 conversations (6 messages); 2 conversations could not be imported.' });
    await fireEvent.click(screen.getByTestId('import-conversations'));
    expect((await screen.findByTestId('import-summary')).textContent).toBe('ChatGPT export: 5 conversations, 2 cannot be imported');
    const before = screen.getByTestId('import-refused');
    expect(before.textContent).toContain('will be left out');
    expect(screen.getAllByTestId('import-refused-item').map((li) => li.textContent)).toEqual([
      "Broken chat: message 'm2' follows 'gone', which does not exist",
      "conversation #5: it is not in ChatGPT's format: missing field `mapping`",
    ]);
    // Only the good ones are offered.
    expect(screen.getByTestId('import-confirm').textContent?.trim()).toBe('Import 3 conversations');
    await fireEvent.click(screen.getByTestId('import-confirm'));
    const done = await screen.findByTestId('import-done');
    expect(done.textContent).toContain('2 conversations could not be imported.');
    expect(done.textContent).toContain('Broken chat');
    expect(done.textContent).toContain("follows 'gone', which does not exist");
    expect(done.classList.contains('partial')).toBe(true);
  });

  it('says nothing when the dialog is cancelled, and says why a file cannot be imported', async () => {
    await section({ previewConversationImport: () => Promise.reject(cancelled) });
    await fireEvent.click(screen.getByTestId('import-conversations'));
    await waitFor(() => expect((screen.getByTestId('import-conversations') as HTMLButtonElement).disabled).toBe(false));
    expect(screen.queryByTestId('import-error')).toBeNull();
    expect(screen.queryByTestId('import-preview')).toBeNull();
  });

  it('shows the reason a file is refused', async () => {
    const message = 'Nothing was imported: notes.json is not JSON (expected value at line 1 column 1). Choose a Switchboard or ChatGPT export.';
    await section({ previewConversationImport: () => Promise.reject({ kind: 'config', message, retryable: false }) });
    await fireEvent.click(screen.getByTestId('import-conversations'));
    expect((await screen.findByTestId('import-error')).textContent).toContain('is not JSON');
  });
});

describe('exporting everything', () => {
  it('says nothing when the save dialog is cancelled, and why a folder cannot be written', async () => {
    await section({ exportAll: () => Promise.reject(cancelled) });
    await fireEvent.click(screen.getByTestId('export-all'));
    await waitFor(() => expect((screen.getByTestId('export-all') as HTMLButtonElement).disabled).toBe(false));
    expect(screen.queryByTestId('field-error')).toBeNull();
    expect(screen.queryByTestId('export-path')).toBeNull();
  });

  it('says why the chosen folder cannot be written', async () => {
    const message = 'Could not save to /read-only: Permission denied (os error 13). Choose a folder you can write to.';
    await section({ exportAll: () => Promise.reject({ kind: 'storage', message, retryable: false }) });
    await fireEvent.click(screen.getByTestId('export-all'));
    expect((await screen.findByTestId('field-error')).textContent).toContain('Choose a folder you can write to');
  });
});
