/**
 * The MCP servers section and the tools tray's groups, against the in-memory fake backend: what a
 * person sees and what the shell receives.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../../../App.svelte';
import type { Backend } from '../../ipc/backend';
import type { McpServerInfo, ServerConfig } from '../../ipc/bindings';
import { createFakeBackend, FAKE_MCP_CONFIG } from '../../ipc/fake';
import { errorText } from '../../ipc/fake/errors';
import { AppState } from '../../state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(patch: Partial<Backend> = {}) {
  const base = createFakeBackend({ tickMs: 0, empty: true });
  const backend: Backend = { ...base, ...patch };
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return { app, backend };
}

async function openMcp(): Promise<HTMLElement> {
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-mcp'));
  return screen.findByTestId('settings-section-mcp');
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

const failed: McpServerInfo = {
  config: { type: 'stdio', command: 'node', args: ['server.js', '--root', '/home/you/My Documents'] },
  enabled: true,
  detail: {
    name: 'broken',
    transport: 'stdio',
    target: "node server.js --root '/home/you/My Documents'",
    status: { state: 'failed', reason: 'The server exited with status 1 before it answered.' },
    tools: [],
    skipped: ['broken__bad name: the name has a space'],
    held: [],
    stderr: ['Error: Cannot find module server.js', '    at Module._resolveFilename'],
    serverInfo: null,
    restarts: 2,
    offers: { prompts: false, resources: false, subscribe: false, completions: false, logging: false },
    logLevel: null,
  },
};

beforeEach(() => {
  localStorage.clear();
});

describe('the MCP servers section', () => {
  it('lists each server with its target, status, tools and their hints', async () => {
    await start();
    await openMcp();
    const files = await row('files');
    expect(within(files).getByTestId('mcp-status').textContent).toBe('Ready · 2 tools');
    expect(within(files).getByTestId('mcp-target').textContent).toBe('npx -y @modelcontextprotocol/server-filesystem /home/you/Documents');
    const tools = within(files).getAllByTestId('mcp-tool');
    expect(tools.map((t) => t.dataset.toolName)).toEqual(['files__read_file', 'files__write_file']);
    expect(tools[0]?.textContent).toContain('read-only');
    expect(tools[0]?.textContent).toContain('idempotent');
    expect(tools[1]?.textContent).toContain('destructive');
    // A changed tool is held back with its description, and can be reviewed.
    expect(within(files).getByTestId('mcp-held').textContent).toContain('Moves or renames a file or directory.');

    const github = await row('github');
    expect(within(github).getByTestId('mcp-status').textContent).toBe('Needs approval');
    expect(within(github).getByTestId('mcp-reason').textContent).toContain('not been approved');
    expect(screen.getByTestId('settings-section-mcp').textContent).toContain(FAKE_MCP_CONFIG);
  });

  it('shows a failed server’s reason, its output and skipped tools, and the config file’s problem with its path', async () => {
    await start({
      mcpServers: async () => ({ configPath: '/etc/mcp.json', problem: 'Line 3: expected a comma.', servers: [failed] }),
    });
    await openMcp();
    const problem = await screen.findByTestId('mcp-problem');
    expect(problem.textContent).toContain('Line 3: expected a comma.');
    expect(problem.textContent).toContain('/etc/mcp.json');

    const r = await row('broken');
    expect(r.dataset.state).toBe('failed');
    expect(within(r).getByTestId('mcp-status').textContent).toBe('Failed');
    expect(within(r).getByTestId('mcp-reason').textContent).toContain('exited with status 1');
    expect(within(r).getByTestId('mcp-stderr').textContent).toBe('Error: Cannot find module server.js\n    at Module._resolveFilename');
    expect((within(r).getByTestId('mcp-stderr').closest('details') as HTMLDetailsElement).open).toBe(true);
    expect(within(r).getByTestId('mcp-skipped').textContent).toContain('the name has a space');
    expect(r.textContent).toContain('restarted 2 times');
  });

  it('“Review and run…” calls mcp_approve, and the section polls until the server is ready', async () => {
    const { backend } = await start();
    const approve = vi.spyOn(backend, 'mcpApprove');
    const servers = vi.spyOn(backend, 'mcpServers');
    await openMcp();
    await fireEvent.click(within(await row('github')).getByTestId('mcp-approve-github'));
    expect(approve).toHaveBeenCalledWith('github');
    await waitFor(async () => expect(within(await row('github')).getByTestId('mcp-status').textContent).toBe('Ready · 1 tool'), { timeout: 3000 });
    expect(servers.mock.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('a remote server that wants a sign-in says so, and “Sign in…” calls mcp_sign_in', async () => {
    const { backend } = await start();
    await backend.mcpSignOut('files');
    const signIn = vi.spyOn(backend, 'mcpSignIn');
    await openMcp();
    const r = await row('files');
    expect(within(r).getByTestId('mcp-status').textContent).toBe('Sign-in needed');
    expect(within(r).getByTestId('mcp-reason').textContent).toContain('requires signing in');
    await fireEvent.click(within(r).getByTestId('mcp-sign-in-files'));
    expect(signIn).toHaveBeenCalledWith('files');
    await waitFor(async () => expect(within(await row('files')).getByTestId('mcp-status').textContent).toMatch(/^Ready/), { timeout: 3000 });
  });

  it('shows a refused approval next to the server', async () => {
    await start({ mcpApproveTools: () => Promise.reject({ kind: 'config', message: 'The changed tools were not approved.', retryable: false }) });
    await openMcp();
    await fireEvent.click(within(await row('files')).getByTestId('mcp-approve-tools-files'));
    expect((await within(await row('files')).findByTestId('field-error')).textContent).toContain('The changed tools were not approved.');
  });

  it('switches a server off and on, and removes one after confirming', async () => {
    const { backend, app } = await start();
    const setEnabled = vi.spyOn(backend, 'mcpSetEnabled');
    await openMcp();
    await fireEvent.click(within(await row('files')).getByTestId('mcp-enabled-files'));
    expect(setEnabled).toHaveBeenCalledWith('files', false);
    await waitFor(async () => expect(within(await row('files')).getByTestId('mcp-status').textContent).toBe('Disabled'));
    await waitFor(() => expect(app.tools.some((t) => t.name === 'files__read_file')).toBe(false));

    const remove = vi.spyOn(backend, 'mcpRemove');
    await fireEvent.click(within(await row('github')).getByTestId('mcp-remove-github'));
    expect(remove).not.toHaveBeenCalled();
    await fireEvent.click(await screen.findByTestId('confirm-delete'));
    expect(remove).toHaveBeenCalledWith('github');
    await waitFor(() => expect(screen.getAllByTestId('mcp-server').map((r) => r.dataset.name)).toEqual(['files']));
  });

  it('adds a local server: arguments one per line, exactly; environment from KEY=VALUE lines', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'mcpAdd');
    await openMcp();
    await fireEvent.click(screen.getByTestId('mcp-add'));
    expect(screen.getByTestId('mcp-secret-hint').textContent).toContain('keychain');
    await setValue(screen.getByTestId('mcp-name'), 'notes');
    await setValue(screen.getByTestId('mcp-command'), 'uvx');
    await setValue(screen.getByTestId('mcp-args'), 'mcp-notes\n\n--dir\n/home/you/My Notes\n');
    await setValue(screen.getByTestId('mcp-env'), 'NOTES_TOKEN=abc=def\nLOG_LEVEL=debug');
    await setValue(screen.getByTestId('mcp-timeout'), '30');
    await fireEvent.submit(screen.getByTestId('mcp-form'));

    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    const [name, config] = add.mock.calls[0] as [string, ServerConfig];
    expect(name).toBe('notes');
    expect(config).toEqual({
      type: 'stdio',
      command: 'uvx',
      args: ['mcp-notes', '--dir', '/home/you/My Notes'],
      env: { NOTES_TOKEN: 'abc=def', LOG_LEVEL: 'debug' },
      cwd: null,
      timeout: 30,
    });
    await waitFor(() => expect(screen.queryByTestId('mcp-form')).toBeNull());
    expect(await row('notes')).toBeTruthy();
  });

  it('adds a remote server with headers, and shows field and backend errors', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'mcpAdd');
    await openMcp();
    await fireEvent.click(screen.getByTestId('mcp-add'));
    await fireEvent.click(screen.getByTestId('mcp-kind-remote'));
    await setValue(screen.getByTestId('mcp-name'), 'files!');
    await setValue(screen.getByTestId('mcp-url'), 'example.com/mcp');
    await setValue(screen.getByTestId('mcp-headers'), 'Authorization Bearer x');
    await fireEvent.submit(screen.getByTestId('mcp-form'));
    expect(add).not.toHaveBeenCalled();
    expect(screen.getByTestId('mcp-url').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByTestId('mcp-form').textContent).toContain('Line 1: write Name: value.');

    await setValue(screen.getByTestId('mcp-url'), 'https://example.com/mcp');
    await setValue(screen.getByTestId('mcp-headers'), 'Authorization: Bearer x\nX-Team:  blue');
    await fireEvent.submit(screen.getByTestId('mcp-form'));
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(add.mock.calls[0]).toEqual(['files!', { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x', 'X-Team': 'blue' }, timeout: null }]);
    // The service refuses the name (the form lets it through): its message is shown in the form, which stays open.
    expect((await screen.findByTestId('mcp-form')).textContent).toContain(errorText('mcpName', { name: 'files!' }));
  });

  it('imports from Claude Desktop after a preview', async () => {
    const { backend } = await start();
    const run = vi.spyOn(backend, 'mcpImport');
    await openMcp();
    await fireEvent.click(await screen.findByTestId('mcp-import-claude'));
    const preview = await screen.findByTestId('mcp-import-preview');
    const items = within(preview).getAllByTestId('mcp-import-server');
    expect(items.map((i) => i.dataset.name)).toEqual(['files', 'brave-search']);
    expect(items[0]?.textContent).toContain('kept');
    expect(items[1]?.textContent).toContain('env BRAVE_API_KEY');
    expect(screen.getByTestId('mcp-import').textContent).toContain('left behind');
    await fireEvent.click(screen.getByTestId('mcp-import-run'));
    expect(run).toHaveBeenCalledWith('claude');
    expect((await screen.findByTestId('mcp-import-done')).textContent).toContain('Imported 1 server');
    expect(within(await row('brave-search')).getByTestId('mcp-status').textContent).toBe('Needs approval');
  });
});

describe('the tools tray', () => {
  it('groups tools by source: built-in first, then one group per MCP server, then the other kinds', async () => {
    const { app } = await start();
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    const groups = screen.getAllByTestId('tool-group');
    expect(groups.map((g) => g.dataset.group)).toEqual(['builtin', 'mcp:files', 'HTTP']);
    expect(groups[1]?.querySelector('h3')?.textContent).toContain('files');
    expect(within(groups[0] as HTMLElement).getAllByTestId('tool-row').map((r) => r.dataset.toolName)).toEqual(['get_time', 'web_fetch', 'shell']);
    expect(within(groups[1] as HTMLElement).getAllByTestId('tool-row').map((r) => r.dataset.toolName)).toEqual(['files__read_file', 'files__write_file']);

    // Forcing still works from a group.
    await fireEvent.click(within(groups[1] as HTMLElement).getAllByTestId('tool-force')[0] as HTMLElement);
    expect(app.forced).toEqual(['files__read_file']);
  });
});
