/**
 * MCP beyond tools in the fake: the running `files` server's prompts (one without arguments, one
 * whose arguments it refuses unless valid, one with completion), its resources and a template,
 * argument completion, attaching a resource (an attachment as the store keeps it), its log lines
 * at a level, and the roots servers may use (a folder "chosen" in the fake native dialog).
 */
import type { Attachment, CompletionRef, LogLevel, McpFeatures, McpResources, PromptInfo, PromptMessages } from '../../mcp/types';
import { LOG_LEVELS } from '../../mcp/types';
import type { Backend } from '../backend';
import { fakeOnlyError } from './errors';
import type { FakeState } from './state';

const PROMPTS: Record<string, PromptInfo[]> = {
  files: [
    { name: 'summarise_folder', title: 'Summarise a folder', description: 'Summarises what the files of a folder are about.', arguments: [] },
    {
      name: 'review_code',
      title: 'Review code',
      description: 'Asks for a review of a file in one language.',
      arguments: [
        { name: 'language', title: 'Language', description: 'The programming language', required: true },
        { name: 'file', title: null, description: 'The file to review', required: true },
        { name: 'focus', title: null, description: 'What to look at first', required: false },
      ],
    },
    {
      name: 'plan_trip',
      title: null,
      description: 'Plans a trip of a number of days.',
      arguments: [
        { name: 'city', title: null, description: 'Where to', required: true },
        { name: 'days', title: null, description: 'How many days (1–30)', required: true },
      ],
    },
  ],
};

const LANGUAGES = ['go', 'java', 'javascript', 'kotlin', 'python', 'ruby', 'rust', 'typescript'];

const resource = (name: string, mimeType: string, size: number, title: string | null = null) => ({
  uri: `file:///home/you/Documents/${name}`,
  name,
  title,
  description: null,
  mimeType,
  size,
  subscribed: false,
  updates: 0,
});

const RESOURCES: Record<string, McpResources> = {
  files: {
    server: 'files',
    resources: [resource('notes.md', 'text/markdown', 2048, 'Notes'), resource('budget.csv', 'text/csv', 812), resource('photo.png', 'image/png', 48_211)],
    templates: [{ uriTemplate: 'file:///home/you/Documents/{name}', name: 'Any document', title: null, description: 'A file in Documents by name', mimeType: null, variables: ['name'], problem: null }],
    skipped: [],
  },
};

const DOCUMENTS = ['notes.md', 'budget.csv', 'photo.png', 'letter.txt', 'report.md'];

/** A stable fake content address (64 hex digits) for a URI. */
function fakeSha(text: string): string {
  let h = 2166136261;
  let out = '';
  for (let round = 0; round < 8; round++) {
    for (const ch of `${round}:${text}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out;
}

function mimeOf(uri: string): string {
  if (uri.endsWith('.md')) return 'text/markdown';
  if (uri.endsWith('.csv')) return 'text/csv';
  if (uri.endsWith('.png')) return 'image/png';
  return 'text/plain';
}

/** The fake's per-server log levels, and its roots. */
export interface FakeMcpExtras {
  levels: Record<string, LogLevel>;
  /** Every server's roots (`*`) and each server's own. */
  roots: Record<string, string[]>;
  /** Folders the fake native dialog "chooses", in turn. */
  picks: string[];
}

export function mcpExtrasSeed(): FakeMcpExtras {
  return {
    levels: {},
    roots: { '*': ['/home/you/Documents'] },
    picks: ['/home/you/Projects', '/home/you/Pictures', '/home/you/Music'],
  };
}

function running(st: FakeState, server: string): void {
  const s = st.mcp.find((m) => m.name === server);
  if (!s) throw fakeOnlyError('notFound', `No MCP server is called "${server}".`);
  if (s.detail.status.state !== 'ready') throw fakeOnlyError('network', `The MCP server "${server}" is not running.`);
}

export function mcpFeatureCommands(st: FakeState): Omit<McpFeatures, 'answerElicitation' | 'answerSampling'> & Pick<Backend, 'mcpResourceTemplates' | 'mcpResourceUpdates'> {
  const x = st.mcpExtras;
  return {
    async mcpPrompts(server) {
      running(st, server);
      return { server, prompts: PROMPTS[server] ?? [], skipped: [] };
    },
    async mcpGetPrompt(server, name, args): Promise<PromptMessages> {
      running(st, server);
      const p = (PROMPTS[server] ?? []).find((q) => q.name === name);
      if (!p) throw fakeOnlyError('notFound', `The server "${server}" has no prompt "${name}".`);
      const refuse = (why: string) => fakeOnlyError('badRequest', `the MCP server '${server}' refused the prompt '${name}' with these arguments: ${why}`);
      for (const a of p.arguments) {
        if (a.required && !(args[a.name] ?? '').trim()) throw refuse(`Missing required argument: ${a.name}`);
      }
      const out = (text: string, attachments: Attachment[] = []): PromptMessages => ({ server, prompt: name, description: p.description, text, messages: [{ role: 'user', text }], attachments, notes: [] });
      if (name === 'plan_trip') {
        const days = Number(args.days);
        if (!Number.isInteger(days) || days < 1 || days > 30) throw refuse('Invalid arguments: days must be a whole number from 1 to 30');
        return out(`Plan a ${days}-day trip to ${args.city}. Suggest one thing to see each morning and one place to eat each evening.`);
      }
      if (name === 'review_code') {
        const uri = `file:///home/you/Documents/${args.file}`;
        const attachment: Attachment = { id: fakeSha(uri), name: uri, mimeType: 'text/plain', kind: 'text', size: 640 };
        return out(`Review this ${args.language} code${args.focus ? `, looking first at ${args.focus}` : ''}.`, [attachment]);
      }
      return out('Summarise what the files in /home/you/Documents are about, one line each.');
    },
    async mcpResources(server) {
      running(st, server);
      return RESOURCES[server] ?? { server, resources: [], templates: [], skipped: [] };
    },
    async mcpResourceTemplates(server) {
      running(st, server);
      return RESOURCES[server]?.templates ?? [];
    },
    // The fake's resources never change on their own.
    async mcpResourceUpdates() {
      return [];
    },
    async mcpExpandTemplate(uriTemplate, values) {
      const uri = uriTemplate.replace(/\{([^}]+)\}/g, (_all, name: string) => encodeURIComponent(values[name] ?? ''));
      if (uri.split(':')[0] !== uriTemplate.split(':')[0]) throw fakeOnlyError('badRequest', `The template ${uriTemplate} expands to ${uri}, another scheme than its own; it is not read.`);
      return uri;
    },
    async mcpAttachResource(server, uri): Promise<Attachment> {
      running(st, server);
      if (!uri.startsWith('file:///home/you/Documents/')) throw fakeOnlyError('badRequest', `The resource ${uri} is not one of "${server}"'s: its address is outside the server's scheme.`);
      const name = uri.slice('file:///home/you/Documents/'.length);
      if (!DOCUMENTS.includes(decodeURIComponent(name))) throw fakeOnlyError('notFound', `The server "${server}" has no resource ${uri}.`);
      const mime = mimeOf(uri);
      return { id: fakeSha(uri), name: uri, mimeType: mime, kind: mime.startsWith('image/') ? 'image' : 'text', size: 900 + name.length * 37, ...(mime.startsWith('image/') ? { width: 640, height: 480 } : {}) };
    },
    async mcpComplete(server, reference: CompletionRef, argument, value) {
      running(st, server);
      const v = value.toLowerCase();
      const values =
        reference.type === 'prompt' && argument === 'language'
          ? LANGUAGES.filter((l) => l.startsWith(v))
          : (reference.type === 'prompt' && argument === 'file') || (reference.type === 'resource' && argument === 'name')
            ? DOCUMENTS.filter((d) => d.toLowerCase().startsWith(v))
            : [];
      return { values, total: values.length, hasMore: false };
    },
    async mcpSetLogLevel(server, level) {
      running(st, server);
      if (!(LOG_LEVELS as readonly string[]).includes(level)) throw fakeOnlyError('badRequest', `"${level}" is not a log level.`);
      x.levels[server] = level;
      const s = st.mcp.find((m) => m.name === server);
      if (!s) throw fakeOnlyError('notFound', `No MCP server is called "${server}".`);
      // As the service reports it: the level on the server's detail, its messages in its output.
      Object.assign(s.detail, { logLevel: level });
      if (LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf('debug')) s.detail.stderr = [...s.detail.stderr, '[log debug] files: listing 3 resources'].slice(-200);
      return { config: s.config, enabled: s.config.disabled !== true, detail: s.detail };
    },
    async mcpRoots(server = null) {
      return [...(x.roots[server ?? '*'] ?? [])];
    },
    async mcpAddRoot(server = null) {
      if (server !== null) running(st, server);
      const path = x.picks.shift();
      if (!path) throw fakeOnlyError('cancelled', 'No folder was added: none was chosen.');
      const list = x.roots[server ?? '*'] ?? [];
      if (!list.includes(path)) x.roots[server ?? '*'] = [...list, path];
      return [...(x.roots[server ?? '*'] ?? [])];
    },
    async mcpRemoveRoot(server, path) {
      x.roots[server ?? '*'] = (x.roots[server ?? '*'] ?? []).filter((p) => p !== path);
      return [...(x.roots[server ?? '*'] ?? [])];
    },
  };
}
