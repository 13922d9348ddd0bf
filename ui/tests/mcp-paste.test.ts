/**
 * Adding an MCP server by pasting the JSON its README shows: a preview first, then the servers
 * are added and wait for the person's approval of their command lines; bad text says why and
 * keeps what was typed.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import errors from '../src/lib/ipc/errors.generated.json';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function openMcp(): Promise<{ backend: Backend; section: HTMLElement }> {
  const backend = createFakeBackend({ tickMs: 0, empty: true });
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-mcp'));
  return { backend, section: await screen.findByTestId('settings-section-mcp') };
}

async function paste(section: HTMLElement, text: string) {
  await fireEvent.click(within(section).getByTestId('mcp-paste'));
  const area = within(section).getByTestId('mcp-paste-text') as HTMLTextAreaElement;
  area.value = text;
  await fireEvent.input(area);
  await fireEvent.click(within(section).getByTestId('mcp-paste-preview'));
}

describe('Settings → MCP: paste JSON', () => {
  it('previews the pasted entry, then adds it waiting for approval', async () => {
    const { backend, section } = await openMcp();
    await paste(section, '"memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }');
    const row = await within(section).findByTestId('mcp-import-server');
    expect(row.dataset.name).toBe('memory');
    expect(row.textContent).toContain('npx -y @modelcontextprotocol/server-memory');
    const add = within(section).getByTestId('mcp-import-run');
    expect(add.textContent).toContain('Add 1 server');
    await fireEvent.click(add);
    await waitFor(() => expect(within(section).getByTestId('mcp-import-done').textContent).toContain('Added 1 server'));
    const overview = await backend.mcpServers();
    const memory = overview.servers.find((s) => s.detail.name === 'memory');
    expect(memory?.detail.status.state).toBe('needsApproval');
  });

  it('says why text is no server and keeps what was typed', async () => {
    const { section } = await openMcp();
    await paste(section, '{"name": "not a server"}');
    const alert = await within(section).findByTestId('mcp-import-error');
    expect(alert.textContent).toBe(errors.mcpPasteNoServer.message);
    expect((within(section).getByTestId('mcp-paste-text') as HTMLTextAreaElement).value).toBe('{"name": "not a server"}');
    expect(within(section).queryByTestId('mcp-import-run')).toBeNull();
  });

  it('a bare server object gets a name and a note saying so', async () => {
    const { section } = await openMcp();
    await paste(section, '{"command": "uvx", "args": ["mcp-server-fetch"]}');
    await within(section).findByTestId('mcp-import-server');
    expect(within(section).getByLabelText('Notes').textContent).toContain('had no name');
  });
});
