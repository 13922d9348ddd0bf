/**
 * MCP servers in the fake: a config of two servers (one running, one waiting for approval), and
 * the commands that add, start, approve and import them. Starting takes a moment, so the page polls.
 */
import type { Backend } from '../backend';
import type { ImportPreview, ImportSource, McpServerInfo, ServerConfig, ServerDetail, ToolInfo } from '../bindings';
import { tool } from './catalog';
import { fakeOnlyError, ipcError } from './errors';
import type { FakeState } from './state';
import { isHttpUrl } from './util';

export const FAKE_MCP_CONFIG = '/home/you/.config/switchboard/mcp.json';

/** What each fake server offers once it runs: its tools (remote name, description, annotations). */
const MCP_CATALOG: Record<string, { remote: string; description: string; annotations: Record<string, unknown> | null }[]> = {
  files: [
    { remote: 'read_file', description: 'Reads a file from the allowed directories.', annotations: { readOnlyHint: true, idempotentHint: true } },
    { remote: 'write_file', description: 'Writes a file in the allowed directories.', annotations: { destructiveHint: true } },
  ],
  github: [{ remote: 'search_issues', description: 'Searches issues on GitHub.', annotations: { readOnlyHint: true, openWorldHint: true } }],
};

/** A fake server: its config entry and its state. */
export interface FakeMcp {
  name: string;
  config: ServerConfig;
  detail: ServerDetail;
}

function mcpTarget(c: ServerConfig): { transport: string; target: string } {
  if (c.url) return { transport: 'http', target: c.url };
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  return { transport: 'stdio', target: [c.command ?? '', ...(c.args ?? [])].map(quote).join(' ') };
}

function mcpServer(name: string, config: ServerConfig, status: ServerDetail['status']): FakeMcp {
  const { transport, target } = mcpTarget(config);
  return { name, config, detail: { name, transport, target, status, tools: [], skipped: [], held: [], stderr: [], serverInfo: null, restarts: 0, offers: { prompts: false, resources: false, subscribe: false, completions: false, logging: false }, logLevel: null } };
}

/** The server runs: its tools are offered. */
function mcpReady(s: FakeMcp): void {
  s.detail.status = { state: 'ready' };
  s.detail.tools = (MCP_CATALOG[s.name] ?? [{ remote: 'echo', description: 'Echoes its input.', annotations: null }]).map((t) => ({
    name: `${s.name}__${t.remote}`,
    remote: t.remote,
    annotations: t.annotations,
    findings: [],
  }));
  s.detail.serverInfo = `${s.name}-server 1.0.0`;
  s.detail.stderr = [`${s.name}-server running on stdio`];
  // What the server offers beyond tools (the service's `offers`), and its log messages among its output.
  if (s.name === 'files') {
    Object.assign(s.detail, { offers: { prompts: true, resources: true, subscribe: false, completions: true, logging: true }, logLevel: null });
    s.detail.stderr.push('[log info] files: allowed directories: /home/you/Documents');
  }
}

export function mcpSeed(): FakeMcp[] {
  const files = mcpServer('files', { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/you/Documents'] }, { state: 'ready' });
  mcpReady(files);
  files.detail.held = [{ name: 'files__move_file', why: 'its definition changed since you approved it', description: 'Moves or renames a file or directory.', fingerprint: 'f00d', findings: [] }];
  const github = mcpServer(
    'github',
    { type: 'stdio', command: 'docker', args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${secret:github}' } },
    { state: 'needsApproval', reason: 'This command has not been approved to run on this computer.' },
  );
  return [files, github];
}

const MCP_TOOL_DESCRIPTIONS: Record<string, string> = Object.fromEntries(
  Object.entries(MCP_CATALOG).flatMap(([server, tools]) => tools.map((t) => [`${server}__${t.remote}`, t.description])),
);

const IMPORT_SOURCES: ImportSource[] = [{ app: 'claude', path: '/home/you/.config/Claude/claude_desktop_config.json' }];

/** A server name as the service takes it. */
const SERVER_NAME_RE = /^[A-Za-z0-9_.-]+$/;

/** The tools of the servers that run. */
export function mcpTools(st: FakeState): ToolInfo[] {
  return st.mcp
    .filter((s) => s.config.disabled !== true && s.detail.status.state === 'ready')
    .flatMap((s) => s.detail.tools.map((t) => tool(t.name, MCP_TOOL_DESCRIPTIONS[t.name] ?? '', { kind: 'mcp', server: s.name })));
}

export function mcpCommands(st: FakeState): Pick<
  Backend,
  | 'mcpServers'
  | 'mcpAdd'
  | 'mcpEdit'
  | 'mcpRemove'
  | 'mcpSetEnabled'
  | 'mcpApprove'
  | 'mcpRestart'
  | 'mcpSignIn'
  | 'mcpSignOut'
  | 'mcpApproveTools'
  | 'mcpImportSources'
  | 'mcpImportPreview'
  | 'mcpImport'
  | 'mcpPastePreview'
  | 'mcpPaste'
> {
  const { mcp, imported } = st;

  function mcpInfo(s: FakeMcp): McpServerInfo {
    return structuredClone({ config: s.config, enabled: s.config.disabled !== true, detail: s.detail });
  }

  /** The server `name`; `missing` is the service's answer when there is none. */
  function mcpFind(name: string, missing: 'mcpRemoveNotFound' | 'mcpSetEnabledNotFound' | 'mcpApproveNotFound' | 'mcpRestartNotFound' | 'mcpSignInNotFound' | 'mcpSignOutNotFound' | 'mcpApproveToolsNotFound'): FakeMcp {
    const s = mcp.find((x) => x.name === name);
    if (!s) throw ipcError(missing, { name });
    return s;
  }

  /** Starting takes a moment (so the page polls), then the server is ready. */
  function mcpStart(s: FakeMcp): void {
    if (s.config.disabled) {
      s.detail.status = { state: 'stopped' };
      s.detail.tools = [];
      return;
    }
    s.detail.status = { state: 'starting' };
    s.detail.tools = [];
    setTimeout(() => {
      if (mcp.includes(s) && s.detail.status.state === 'starting') mcpReady(s);
    }, st.tick * 20);
  }

  function mcpOverview() {
    const servers = [...mcp].sort((a, b) => a.name.localeCompare(b.name)).map(mcpInfo);
    return { configPath: FAKE_MCP_CONFIG, problem: null, servers };
  }

  function importPreview(app: string): ImportPreview {
    const source = IMPORT_SOURCES.find((x) => x.app === app);
    // The shell's own answer (src-tauri/src/commands/mcp.rs): the page names an app, never a path.
    if (!source) throw fakeOnlyError('notFound', `No MCP config of '${app}' was found on this computer.`);
    return {
      path: source.path,
      servers: [
        { name: 'files', target: 'npx -y @modelcontextprotocol/server-filesystem /home/you', secrets: [], exists: mcp.some((s) => s.name === 'files') },
        { name: 'brave-search', target: 'npx -y @modelcontextprotocol/server-brave-search', secrets: ['env BRAVE_API_KEY'], exists: imported.has('brave-search') || mcp.some((s) => s.name === 'brave-search') },
      ],
      notes: ['The global shortcut setting is not about MCP servers and was left behind.'],
    };
  }

  /** The service's reading of pasted JSON (crates/mcp/src/paste.rs), for the shapes READMEs show. */
  function pastePreview(text: string): ImportPreview {
    if (!text.trim()) throw ipcError('mcpPasteEmpty', {});
    let value: unknown;
    try {
      value = JSON.parse(text.trim().startsWith('"') ? `{${text}}` : text);
    } catch {
      throw ipcError('mcpPasteNotJson', {});
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw ipcError('mcpPasteNoServer', {});
    const obj = value as Record<string, unknown>;
    const isServer = (v: unknown) => typeof v === 'object' && v !== null && ['command', 'url'].some((k) => typeof (v as Record<string, unknown>)[k] === 'string');
    const notes: string[] = [];
    let servers: Record<string, unknown>;
    if (typeof obj.mcpServers === 'object' && obj.mcpServers !== null) servers = obj.mcpServers as Record<string, unknown>;
    else if (typeof obj.servers === 'object' && obj.servers !== null) servers = obj.servers as Record<string, unknown>;
    else if (isServer(obj)) {
      servers = { server: obj };
      notes.push("the pasted server had no name: it is called 'server' (rename it after adding)");
    } else if (Object.keys(obj).length > 0 && Object.values(obj).every(isServer)) servers = obj;
    else throw ipcError('mcpPasteNoServer', {});
    return {
      path: 'pasted JSON',
      servers: Object.entries(servers).map(([name, v]) => {
        const c = v as { command?: string; args?: string[]; url?: string };
        return { name, target: c.command ? [c.command, ...(c.args ?? [])].join(' ') : (c.url ?? ''), secrets: [], exists: mcp.some((s) => s.name === name) };
      }),
      notes,
    };
  }

  return {
    async mcpPastePreview(text) {
      return pastePreview(text);
    },
    async mcpPaste(text) {
      const preview = pastePreview(text);
      for (const x of preview.servers) {
        if (x.exists) continue;
        const [command = '', ...args] = x.target.split(' ');
        const config: ServerConfig = x.target.startsWith('http') ? { type: 'http', url: x.target } : { type: 'stdio', command, args };
        mcp.push(mcpServer(x.name, config, { state: 'needsApproval', reason: 'This command has not been approved to run on this computer.' }));
      }
      return preview;
    },
    async mcpServers() {
      return mcpOverview();
    },
    async mcpAdd(name, config) {
      if (!SERVER_NAME_RE.test(name)) throw ipcError('mcpName', { name });
      const remote = config.type === 'http' || config.type === 'sse' || (!config.type && !!config.url);
      if (remote && !isHttpUrl(config.url ?? '')) throw ipcError('mcpUrl', { name, scheme: (config.url ?? '').split(':')[0] ?? '' });
      if (!remote && !config.command?.trim()) throw ipcError('mcpNothingToRun', { name });
      // Like the service: a server of the same name is replaced.
      const s = mcpServer(name, structuredClone(config), { state: 'stopped' });
      const old = mcp.findIndex((x) => x.name === name);
      if (old >= 0) mcp.splice(old, 1, s);
      else mcp.push(s);
      // Like the shell: a local command waits for the person's yes in a native dialog; the fake says yes.
      mcpStart(s);
      return mcpInfo(s);
    },
    async mcpEdit(name, newName, config) {
      if (!SERVER_NAME_RE.test(newName)) throw ipcError('mcpName', { name: newName });
      const remote = config.type === 'http' || config.type === 'sse' || (!config.type && !!config.url);
      if (remote && !isHttpUrl(config.url ?? '')) throw ipcError('mcpUrl', { name: newName, scheme: (config.url ?? '').split(':')[0] ?? '' });
      if (!remote && !config.command?.trim()) throw ipcError('mcpNothingToRun', { name: newName });
      const old = mcp.findIndex((x) => x.name === name);
      if (old < 0) throw ipcError('mcpEditNotFound', { name });
      if (newName !== name && mcp.some((x) => x.name === newName)) throw ipcError('mcpEditNameTaken', { name: newName });
      // Like the service: it keeps its enabled state; the fake says yes to the native dialog.
      const s = mcpServer(newName, { ...structuredClone(config), disabled: mcp[old]!.config.disabled }, { state: 'stopped' });
      mcp.splice(old, 1, s);
      mcpStart(s);
      return { server: mcpInfo(s), stoppedCalls: 0 };
    },
    async mcpRemove(name) {
      const s = mcpFind(name, 'mcpRemoveNotFound');
      mcp.splice(mcp.indexOf(s), 1);
      return mcpOverview();
    },
    async mcpSetEnabled(name, enabled) {
      const s = mcpFind(name, 'mcpSetEnabledNotFound');
      s.config = { ...s.config, disabled: !enabled };
      if (!enabled) {
        s.detail.status = { state: 'stopped' };
        s.detail.tools = [];
      } else if (s.detail.status.state !== 'needsApproval') {
        mcpStart(s);
      }
      return mcpInfo(s);
    },
    async mcpApprove(name) {
      const s = mcpFind(name, 'mcpApproveNotFound');
      mcpStart(s);
      return mcpInfo(s);
    },
    async mcpRestart(name) {
      const s = mcpFind(name, 'mcpRestartNotFound');
      s.detail.restarts = 0;
      // Like the service: a server still waiting for the person's yes keeps waiting.
      if (s.detail.status.state !== 'needsApproval') mcpStart(s);
      return mcpInfo(s);
    },
    async mcpSignIn(name) {
      const s = mcpFind(name, 'mcpSignInNotFound');
      // Needs a server that runs and asks for it; the generator has none.
      if (s.detail.status.state !== 'needsSignIn') throw fakeOnlyError('config', `'${name}' does not ask to sign in.`);
      mcpStart(s);
      return mcpInfo(s);
    },
    async mcpSignOut(name) {
      const s = mcpFind(name, 'mcpSignOutNotFound');
      s.detail.status = { state: 'needsSignIn', reason: 'the server requires signing in (OAuth)' };
      s.detail.tools = [];
      return mcpInfo(s);
    },
    async mcpApproveTools(name) {
      const s = mcpFind(name, 'mcpApproveToolsNotFound');
      // Like the service: with no tools waiting there is nothing to do.
      s.detail.held = [];
      return mcpInfo(s);
    },
    async mcpImportSources() {
      return structuredClone(IMPORT_SOURCES);
    },
    async mcpImportPreview(app) {
      return importPreview(app);
    },
    async mcpImport(app) {
      const preview = importPreview(app);
      for (const x of preview.servers) {
        if (x.exists) continue;
        imported.add(x.name);
        const [command = '', ...args] = x.target.split(' ');
        mcp.push(mcpServer(x.name, { type: 'stdio', command, args }, { state: 'needsApproval', reason: 'This command has not been approved to run on this computer.' }));
      }
      return preview;
    },
  };
}
