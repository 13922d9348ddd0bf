/**
 * MCP beyond tools in the fake: the running `files` server's prompts (one without arguments, one
 * whose arguments it refuses unless valid, one with completion), its resources and a template,
 * argument completion, attaching a resource (an attachment as the store keeps it), its log lines
 * at a level, and the roots servers may use (a folder "chosen" in the fake native dialog).
 */
import type { Attachment, CompletionRef, LogLevel, McpFeatures, PromptInfo, PromptMessages, ResourceList, RootsConfig, ServerLogLine } from '../../mcp/types';
import { LOG_LEVELS } from '../../mcp/types';
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
        { name: 'file', description: 'The file to review', required: true },
        { name: 'focus', description: 'What to look at first', required: false },
      ],
    },
    {
      name: 'plan_trip',
      description: 'Plans a trip of a number of days.',
      arguments: [
        { name: 'city', description: 'Where to', required: true },
        { name: 'days', description: 'How many days (1–30)', required: true },
      ],
    },
  ],
};

const LANGUAGES = ['go', 'java', 'javascript', 'kotlin', 'python', 'ruby', 'rust', 'typescript'];

const RESOURCES: Record<string, ResourceList> = {
  files: {
    resources: [
      { uri: 'file:///home/you/Documents/notes.md', name: 'notes.md', title: 'Notes', mimeType: 'text/markdown', size: 2048 },
      { uri: 'file:///home/you/Documents/budget.csv', name: 'budget.csv', mimeType: 'text/csv', size: 812 },
      { uri: 'file:///home/you/Documents/photo.png', name: 'photo.png', mimeType: 'image/png', size: 48_211 },
    ],
    templates: [{ uriTemplate: 'file:///home/you/Documents/{name}', name: 'Any document', description: 'A file in Documents by name', mimeType: null }],
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

/** The fake's per-server logs and levels, and its roots. */
export interface FakeMcpExtras {
  levels: Record<string, LogLevel>;
  logs: Record<string, ServerLogLine[]>;
  roots: RootsConfig;
  /** Folders the fake native dialog "chooses", in turn. */
  picks: string[];
}

export function mcpExtrasSeed(): FakeMcpExtras {
  return {
    levels: {},
    logs: {
      files: [
        { level: 'info', logger: 'files', text: 'Allowed directories: /home/you/Documents' },
        { level: 'debug', logger: 'files', text: 'Listing 3 resources' },
        { level: 'warning', logger: 'files', text: 'notes.md changed on disk; subscribers told' },
      ],
    },
    roots: { all: ['/home/you/Documents'], servers: {} },
    picks: ['/home/you/Projects', '/home/you/Pictures', '/home/you/Music'],
  };
}

function running(st: FakeState, server: string): void {
  const s = st.mcp.find((m) => m.name === server);
  if (!s) throw fakeOnlyError('notFound', `No MCP server is called "${server}".`);
  if (s.detail.status.state !== 'ready') throw fakeOnlyError('network', `The MCP server "${server}" is not running.`);
}

export function mcpFeatureCommands(st: FakeState): McpFeatures {
  const x = st.mcpExtras;
  return {
    async mcpPrompts(server) {
      running(st, server);
      return PROMPTS[server] ?? [];
    },
    async mcpGetPrompt(server, name, args): Promise<PromptMessages> {
      running(st, server);
      const p = (PROMPTS[server] ?? []).find((q) => q.name === name);
      if (!p) throw fakeOnlyError('notFound', `The server "${server}" has no prompt "${name}".`);
      for (const a of p.arguments) {
        if (a.required && !(args[a.name] ?? '').trim()) throw fakeOnlyError('badRequest', `The server "${server}" refused the prompt: Missing required argument: ${a.name}`);
      }
      if (name === 'plan_trip') {
        const days = Number(args.days);
        if (!Number.isInteger(days) || days < 1 || days > 30) throw fakeOnlyError('badRequest', `The server "${server}" refused the prompt: Invalid arguments: days must be a whole number from 1 to 30`);
        return { text: `Plan a ${days}-day trip to ${args.city}. Suggest one thing to see each morning and one place to eat each evening.`, attachments: [] };
      }
      if (name === 'review_code') {
        const uri = `file:///home/you/Documents/${args.file}`;
        const attachment: Attachment = { id: fakeSha(uri), name: uri, mimeType: 'text/plain', kind: 'text', size: 640 };
        return { text: `Review this ${args.language} code${args.focus ? `, looking first at ${args.focus}` : ''}.`, attachments: [attachment] };
      }
      return { text: 'Summarise what the files in /home/you/Documents are about, one line each.', attachments: [] };
    },
    async mcpResources(server) {
      running(st, server);
      return RESOURCES[server] ?? { resources: [], templates: [] };
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
      if (reference.type === 'prompt' && argument === 'language') return LANGUAGES.filter((l) => l.startsWith(v));
      if ((reference.type === 'prompt' && argument === 'file') || (reference.type === 'resource' && argument === 'name')) return DOCUMENTS.filter((d) => d.toLowerCase().startsWith(v));
      return [];
    },
    async mcpSetLogLevel(server, level) {
      running(st, server);
      if (!(LOG_LEVELS as readonly string[]).includes(level)) throw fakeOnlyError('badRequest', `"${level}" is not a log level.`);
      x.levels[server] = level;
    },
    async mcpServerLog(server) {
      const min = LOG_LEVELS.indexOf(x.levels[server] ?? 'info');
      return (x.logs[server] ?? []).filter((l) => LOG_LEVELS.indexOf(l.level) >= min);
    },
    resolveElicitation: async () => {
      throw fakeOnlyError('badRequest', 'Nothing is waiting for that answer.');
    },
    resolveSampling: async () => {
      throw fakeOnlyError('badRequest', 'Nothing is waiting for that answer.');
    },
    async mcpRoots() {
      return structuredClone(x.roots);
    },
    async mcpAddRoot(server) {
      const path = x.picks.shift();
      if (!path) throw fakeOnlyError('cancelled', 'No folder was added: none was chosen.');
      if (server === null) {
        if (!x.roots.all.includes(path)) x.roots.all.push(path);
      } else {
        const list = (x.roots.servers[server] ??= []);
        if (!list.includes(path)) list.push(path);
      }
      return structuredClone(x.roots);
    },
    async mcpRemoveRoot(server, path) {
      if (server === null) x.roots.all = x.roots.all.filter((p) => p !== path);
      else if (x.roots.servers[server]) {
        x.roots.servers[server] = x.roots.servers[server].filter((p) => p !== path);
        if (x.roots.servers[server].length === 0) delete x.roots.servers[server];
      }
      return structuredClone(x.roots);
    },
  };
}
