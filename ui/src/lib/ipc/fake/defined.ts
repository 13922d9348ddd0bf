/**
 * Tools people define without code (tools.json) in the fake: an HTTP tool and a command tool to
 * start with, OpenAPI documents imported as tools (./openapi.ts), and the commands that add,
 * approve, try and remove them. A definition is checked with the service's words for each mistake.
 */
import type { Backend } from '../backend';
import type { CommandToolConfig, DefinedToolInfo, IpcError, DefinedToolsOverview, HttpToolConfig, ToolInfo, TryResult } from '../bindings';
import { BUILTIN_TOOLS, OTHER_TOOLS, tool } from './catalog';
import { ipcError } from './errors';
import { openApiInfo, openApiPreview, openApiWindowPreview, resolveOpenApi, type FakeOpenApi } from './openapi';
import type { FakeState } from './state';
import { isHttpUrl } from './util';

export const FAKE_TOOLS_CONFIG = '/home/you/.config/switchboard/tools.json';

/** A defined tool: its definition and whether the person allowed it as it is. */
export type FakeDefined = ({ kind: 'http'; config: HttpToolConfig } | { kind: 'command'; config: CommandToolConfig }) & { allowed: boolean };

const TOOL_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const SECRET_RE = /\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}/g;
export const PARAM_RE = /\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;

function shellQuote(a: string): string {
  return /^[\w@%+=:,./{}-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`;
}

function secretsIn(values: string[]): string[] {
  const out: string[] = [];
  for (const v of values) for (const m of v.matchAll(SECRET_RE)) if (m[1] && !out.includes(m[1])) out.push(m[1]);
  return out;
}

function definedTarget(t: FakeDefined): string {
  return t.kind === 'http' ? `${(t.config.method || 'GET').toUpperCase()} ${t.config.url}` : t.config.argv.map(shellQuote).join(' ');
}

function definedKeys(t: FakeDefined): string[] {
  return t.kind === 'http' ? secretsIn([...Object.values(t.config.query ?? {}), ...Object.values(t.config.headers ?? {})]) : secretsIn(Object.values(t.config.env ?? {}));
}

export function definedAsksFirst(t: FakeDefined): boolean {
  if (t.kind === 'command') return t.config.approval !== 'auto';
  const method = (t.config.method || 'GET').toUpperCase();
  return t.config.approval === 'ask' || (t.config.approval == null && method !== 'GET' && method !== 'HEAD');
}

/** What the person allowed is exactly this: the target, the keys and whether it asks. */
function definedFingerprint(t: FakeDefined): string {
  return `${definedTarget(t)}|${definedKeys(t).join(',')}|${definedAsksFirst(t)}`;
}

/** Why a definition cannot work, as the service refuses it (generated from it), or null. */
function definedProblem(t: FakeDefined): IpcError | null {
  const c = t.config;
  const name = c.name;
  const http = t.kind === 'http';
  if (!TOOL_NAME_RE.test(name)) return ipcError(http ? 'httpToolName' : 'commandToolName', { name });
  if (!c.description.trim()) return ipcError(http ? 'httpToolDescription' : 'commandToolDescription', { name });
  if (t.kind === 'http') {
    const url = t.config.url;
    const bare = url.replace(PARAM_RE, 'x').replace(SECRET_RE, 'x');
    if (!isHttpUrl(bare)) return ipcError('httpToolUrl', { name });
    const authority = url.replace(/^[a-z]+:\/\//i, '').split(/[/?#]/)[0] ?? '';
    if (authority.includes('{{')) return ipcError('httpToolHostPlaceholder', { name });
    const key = secretsIn([url])[0];
    if (key) return ipcError('httpToolUrlKey', { name, key });
    const method = (t.config.method || 'GET').toUpperCase();
    if (t.config.body != null && (method === 'GET' || method === 'HEAD')) return ipcError('httpToolBody', { name, method });
  } else {
    const [program = ''] = t.config.argv;
    if (!program.trim()) return ipcError('commandToolProgram', { name });
    if (program.includes('{{')) return ipcError('commandToolProgramPlaceholder', { name, program });
    const secret = secretsIn(t.config.argv)[0];
    if (secret) return ipcError('commandToolSecret', { name, secret });
  }
  return null;
}

function definedInfo(t: FakeDefined): DefinedToolInfo {
  const keys = definedKeys(t);
  const problem = definedProblem(t);
  const needs = t.kind === 'command' || keys.length > 0;
  let state: DefinedToolInfo['state'] = { state: 'ready' };
  if (problem) state = { state: 'invalid', reason: problem.message };
  else if (needs && !t.allowed) {
    const reason =
      t.kind === 'command'
        ? `Run \`${definedTarget(t)}\` on this computer${definedAsksFirst(t) ? ', asking before each run' : ' WITHOUT ASKING before each run'}.`
        : `Send the key${keys.length === 1 ? '' : 's'} ${keys.map((k) => `'${k}'`).join(', ')} to ${new URL(t.config.url.replace(PARAM_RE, 'x')).origin} with the tool '${t.config.name}'.`;
    state = { state: 'needsApproval', reason };
  }
  return { name: t.config.name, kind: t.kind, description: t.config.description, target: definedTarget(t), keys, asksFirst: definedAsksFirst(t), state };
}

export function definedSeed(): FakeDefined[] {
  return [
    {
      kind: 'http',
      allowed: true,
      config: {
        name: 'weather',
        description: 'Current weather for a city (HTTP API tool).',
        method: 'GET',
        url: 'https://api.weather.example/v1/current/{{city}}',
        query: { units: 'metric' },
        headers: { 'X-Api-Key': '{{secret:weather}}' },
        responsePointer: '/current',
      },
    },
    {
      kind: 'command',
      allowed: false,
      config: { name: 'grep_notes', description: 'Searches my notes for a pattern.', argv: ['grep', '-n', '--', '{{pattern}}', 'notes.txt'], cwd: '/home/you/notes' },
    },
  ];
}

/** The defined tools (and OpenAPI operations) offered now. */
export function definedTools(st: FakeState): ToolInfo[] {
  const { defined, openApiDocs } = st;
    const fromDocs = openApiDocs
      .filter((d) => openApiInfo(d).state.state === 'ready')
      .flatMap((d) =>
        openApiPreview(d.request)
          .operations.filter((o) => o.selected)
          .map((o) => tool(o.tool, o.summary, { kind: 'openApi', document: d.request.name }, o.route.startsWith('GET ') ? {} : { approval: 'ask' })),
      );
    return [
      ...defined
        .filter((t) => definedInfo(t).state.state === 'ready' && !OTHER_TOOLS.some((o) => o.name === t.config.name))
        .map((t) => tool(t.config.name, t.config.description, { kind: t.kind }, definedAsksFirst(t) ? { approval: 'ask' } : {})),
      ...fromDocs,
    ];
  }

export function definedCommands(st: FakeState): Pick<
  Backend,
  'definedTools' | 'definedToolConfig' | 'addHttpTool' | 'addCommandTool' | 'approveDefinedTool' | 'removeDefinedTool' | 'tryHttpTool' | 'previewOpenapi' | 'importOpenapi'
> {
  const { defined, openApiDocs } = st;

  /** The tool `name`; `missing` is the service's answer when there is none. */
  function definedFind(name: string, missing: 'definedToolNotFound' | 'definedToolRemoveNotFound' | 'approveDefinedToolNotFound' | 'httpToolNotFound'): FakeDefined {
    const t = defined.find((x) => x.config.name === name);
    if (!t) throw ipcError(missing, { name });
    return t;
  }

  function definedOverview(): DefinedToolsOverview {
    const order = (t: FakeDefined) => (t.kind === 'http' ? 0 : 1);
    return { configPath: FAKE_TOOLS_CONFIG, problem: null, tools: [...[...defined].sort((a, b) => order(a) - order(b)).map(definedInfo), ...openApiDocs.map(openApiInfo)] };
  }

  /** Like the service: checked first, saved, and allowed again only if what the person saw is the same. */
  function definedPut(next: FakeDefined): DefinedToolInfo {
    const problem = definedProblem(next);
    if (problem) throw problem;
    const i = defined.findIndex((x) => x.config.name === next.config.name);
    const old = defined[i];
    if (old && old.kind !== next.kind) throw ipcError('definedToolOtherKind', { name: next.config.name });
    if (BUILTIN_TOOLS.some((b) => b.name === next.config.name)) throw ipcError('definedToolBuiltin', { name: next.config.name });
    // The shell asks in a native dialog; the fake leaves it waiting, as if the person chose "later".
    next.allowed = old !== undefined && old.allowed && definedFingerprint(old) === definedFingerprint(next);
    if (old) defined[i] = next;
    else defined.push(next);
    return definedInfo(next);
  }

  return {
    async definedTools() {
      return definedOverview();
    },
    async definedToolConfig(name) {
      const t = definedFind(name, 'definedToolNotFound');
      return t.kind === 'http' ? { kind: 'http', config: structuredClone(t.config) } : { kind: 'command', config: structuredClone(t.config) };
    },
    async addHttpTool(config) {
      return definedPut({ kind: 'http', config: structuredClone({ ...config, method: (config.method || 'GET').toUpperCase() }), allowed: false });
    },
    async addCommandTool(config) {
      return definedPut({ kind: 'command', config: structuredClone(config), allowed: false });
    },
    async approveDefinedTool(name) {
      const doc = openApiDocs.find((d) => d.request.name === name);
      if (doc) {
        doc.allowed = true;
        return openApiInfo(doc);
      }
      const t = definedFind(name, 'approveDefinedToolNotFound');
      const problem = definedProblem(t);
      if (problem) throw problem;
      t.allowed = true;
      return definedInfo(t);
    },
    async removeDefinedTool(name) {
      const doc = openApiDocs.findIndex((d) => d.request.name === name);
      if (doc >= 0) {
        openApiDocs.splice(doc, 1);
        return definedOverview();
      }
      const t = definedFind(name, 'definedToolRemoveNotFound');
      defined.splice(defined.indexOf(t), 1);
      return definedOverview();
    },
    async tryHttpTool(name, args): Promise<TryResult> {
      const t = definedFind(name, 'httpToolNotFound');
      if (t.kind !== 'http') throw ipcError('httpToolNotFound', { name });
      const problem = definedProblem(t);
      if (problem) throw problem;
      const missing: string[] = [];
      const fill = (text: string, encode: (v: string) => string) =>
        text
          .replace(SECRET_RE, (_, key: string) => `[secret ${key}]`)
          .replace(PARAM_RE, (_, p: string) => {
            const v = args[p];
            if (v === undefined || v === null || v === '') {
              if (!missing.includes(p)) missing.push(p);
              return '';
            }
            return encode(typeof v === 'string' ? v : JSON.stringify(v));
          });
      const c = t.config;
      const url = new URL(fill(c.url, encodeURIComponent));
      for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.set(k, fill(v, (x) => x));
      const headers = Object.entries(c.headers ?? {}).map(([k, v]) => `${k}: ${fill(v, (x) => x)}`);
      const body = c.body == null ? [] : ['', fill(JSON.stringify(c.body, null, 2), (x) => x)];
      if (missing.length > 0) {
        const message = `The call is missing the argument${missing.length === 1 ? '' : 's'} ${missing.map((m) => `'${m}'`).join(', ')}.`;
        return { request: message, ok: null, error: message };
      }
      const request = [`${(c.method || 'GET').toUpperCase()} ${url.toString().replaceAll('%5B', '[').replaceAll('%5D', ']').replaceAll('+', '%20')}`, ...headers, ...body].join('\n');
      return { request, ok: JSON.stringify({ ok: true, tool: name, args }, null, 2), error: null };
    },
    async previewOpenapi(request) {
      return openApiWindowPreview(st.openApiPicks, request);
    },
    async importOpenapi(asked) {
      if (!/^[A-Za-z0-9_-]{1,48}$/.test(asked.name)) throw ipcError('openApiName', { name: asked.name });
      const { request, file } = resolveOpenApi(st.openApiPicks, asked);
      const preview = openApiPreview(request);
      const unknown = request.include?.find((t) => !preview.operations.some((o) => o.tool === t));
      if (unknown) throw ipcError('openApiOperation', { tool: unknown });
      // Written down, as the service does, so the default selection never changes under it.
      const include = preview.operations.filter((o) => o.selected).map((o) => o.tool);
      const source = file ? `/home/you/${file.name}` : request.source.kind === 'url' ? request.source.url.trim() : '';
      const doc: FakeOpenApi = { request: structuredClone({ ...request, include }), source, allowed: false };
      const i = openApiDocs.findIndex((d) => d.request.name === request.name);
      if (i >= 0) openApiDocs[i] = doc;
      else openApiDocs.push(doc);
      // The shell asks in a native dialog; the fake leaves it waiting, as if the person chose "later".
      return { document: openApiInfo(doc), operations: preview.operations, servers: preview.servers, notes: preview.notes };
    },
  };
}
