/**
 * Editing an MCP server after adding it, against the in-memory fake backend: the form opens filled
 * in, says when the edit changes what runs (the shell then asks), sends the edit, and shows the
 * shell's refusal of a name another server has without changing anything.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../../../App.svelte';
import type { Backend } from '../../ipc/backend';
import { createFakeBackend } from '../../ipc/fake';
import { errorText } from '../../ipc/fake/errors';
import { AppState } from '../../state/app.svelte';
import { changesWhatRuns, serverFormFrom, buildServerConfig } from '../../util/mcp';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start() {
  const base = createFakeBackend({ tickMs: 0, empty: true });
  const backend: Backend = { ...base, mcpEdit: vi.fn(base.mcpEdit) };
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-mcp'));
  await screen.findByTestId('settings-section-mcp');
  return { backend };
}

async function row(name: string): Promise<HTMLElement> {
  return waitFor(() => {
    const r = screen.getAllByTestId('mcp-server').find((x) => x.dataset.name === name);
    if (!r) throw new Error(`no row for ${name}`);
    return r;
  });
}

async function setValue(el: HTMLElement, value: string) {
  (el as HTMLInputElement).value = value;
  await fireEvent.input(el);
}

beforeEach(() => localStorage.clear());

describe('editing an MCP server', () => {
  it('opens filled in, says a changed command line is asked about, and saves the edit', async () => {
    const { backend } = await start();
    await fireEvent.click(within(await row('files')).getByTestId('mcp-edit-files'));
    const form = await screen.findByTestId('mcp-form');
    expect(form.dataset.editing).toBe('files');
    expect((within(form).getByTestId('mcp-command') as HTMLInputElement).value).toBe('npx');
    expect((within(form).getByTestId('mcp-args') as HTMLTextAreaElement).value).toBe('-y\n@modelcontextprotocol/server-filesystem\n/home/you/Documents');
    expect(within(form).queryByTestId('mcp-form-asks')).toBeNull();

    await setValue(within(form).getByTestId('mcp-args'), '-y\n@modelcontextprotocol/server-filesystem\n/home/you/Projects');
    expect(within(form).getByTestId('mcp-form-asks').textContent).toContain('asks before it runs');
    await fireEvent.click(within(form).getByTestId('mcp-save'));
    await waitFor(() => expect(screen.queryByTestId('mcp-form')).toBeNull());
    expect(backend.mcpEdit).toHaveBeenCalledWith('files', 'files', expect.objectContaining({ args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/you/Projects'] }));
    await waitFor(async () => expect(within(await row('files')).getByTestId('mcp-target').textContent).toContain('/home/you/Projects'));
  });

  it('refuses a name another server has, next to the name, and changes nothing', async () => {
    const { backend } = await start();
    await fireEvent.click(within(await row('files')).getByTestId('mcp-edit-files'));
    const form = await screen.findByTestId('mcp-form');
    await setValue(within(form).getByTestId('mcp-name'), 'github');
    await fireEvent.click(within(form).getByTestId('mcp-save'));
    const expected = errorText('mcpEditNameTaken', { name: 'github' });
    await waitFor(() => expect(form.textContent).toContain(expected));
    expect(within(form).getByTestId('mcp-name').getAttribute('aria-invalid')).toBe('true');
    expect(backend.mcpEdit).toHaveBeenCalledTimes(1);
    expect(screen.getAllByTestId('mcp-server').map((r) => r.dataset.name)).toEqual(['files', 'github']);
  });

  it('tells a change of what runs from one that does not', () => {
    const before = { type: 'stdio', command: 'npx', args: ['a'], env: { TOKEN: '${secret:t}' } };
    const same = buildServerConfig(serverFormFrom('x', before));
    expect('config' in same && changesWhatRuns(before, same.config)).toBe(false);
    expect(changesWhatRuns(before, { ...before, args: ['b'] })).toBe(true);
    expect(changesWhatRuns(before, { ...before, env: { TOKEN: 'other' } })).toBe(true);
    expect(changesWhatRuns(before, { ...before, timeout: 30 })).toBe(false);
    expect(changesWhatRuns({ url: 'https://a.example/mcp' }, { url: 'https://b.example/mcp' })).toBe(false);
  });
});
