/**
 * An in-memory stand-in for the Tauri shell, used by `npm run dev` in a plain browser and by UI
 * tests. One file per concern, each giving the commands of its concern over one shared state
 * (./state.ts), like the shell's commands over one service:
 * conversations, turns (replayed golden turns, ./golden.ts), tools, providers, settings, keys, MCP
 * servers, defined tools and OpenAPI documents, agents, the data folder, and spend (./usage.ts).
 *
 * Its errors are the service's: every `{kind, message}` it throws for bad input comes from
 * `../errors.generated.json`, produced by running the same input through the real service
 * (./errors.ts says which few cannot be and are written by hand).
 */
import type { Backend } from '../backend';
import { agentCommands, agentsSeed } from './agents';
import { attachmentCommands } from './attachments';
import { compactionCommands } from './compaction';
import { conversationCommands, seedConversations } from './conversations';
import { dataCommands } from './data';
import { fakeOnlyError } from './errors';
import { definedCommands, definedSeed } from './defined';
import { keyCommands, keychainSeed, startKeychainProbe, storesSeed } from './keys';
import { mcpCommands, mcpSeed } from './mcp';
import { mcpExtrasSeed, mcpFeatureCommands } from './mcpFeatures';
import { askCommands } from './asks';
import type { FakeOptions } from './options';
import { modelCommands } from './models';
import { profilesSeed, providerCommands } from './providers';
import { seedLongChat } from './long';
import { searchCommandsFake } from './search';
import { settingsCommands, settingsSeed } from './settings';
import type { FakeState } from './state';
import { toolCommands } from './tools';
import { treeCommands } from './tree';
import { turnCommands } from './turns';
import { usageCommands } from './usage';
import { withHistory } from './usageHistory';
import { OPEN_PAGE } from '../bindings';

export { FAKE_KEYCHAIN_PROBLEM, fakeOptionsFromUrl, type FakeOptions } from './options';
export { FAKE_MCP_CONFIG } from './mcp';
export { FAKE_TOOLS_CONFIG } from './defined';

export function createFakeBackend(opts: FakeOptions = {}): Backend {
  let seq = 0;
  const st: FakeState = {
    opts,
    tick: opts.tickMs ?? 28,
    id: (p) => `${p}_${Date.now().toString(36)}_${(seq++).toString(36)}`,
    clock: () => ++seq,
    conversations: new Map(),
    running: new Map(),
    mcp: mcpSeed(),
    mcpExtras: mcpExtrasSeed(),
    imported: new Set(),
    defined: definedSeed(),
    openApiDocs: [],
    openApiPicks: [],
    agentsFile: agentsSeed(),
    profiles: profilesSeed(opts),
    stale: new Set(opts.noProviders ? [] : ['lmstudio']),
    settings: settingsSeed(opts),
    stores: storesSeed(opts),
    keychain: keychainSeed(opts),
    blobs: new Map(),
  };
  if (!opts.empty) seedConversations(st);
  if (opts.longChat) seedLongChat(st, opts.longChat);
  startKeychainProbe(st);
  return {
    ...conversationCommands(st),
    ...compactionCommands(st),
    ...turnCommands(st),
    ...treeCommands(st, OPEN_PAGE),
    ...toolCommands(st),
    ...providerCommands(st),
    ...modelCommands(st),
    ...settingsCommands(st),
    ...keyCommands(st),
    ...mcpCommands(st),
    // Prompts, resources, roots, logs and a server's questions: the shell's commands of issue 29.
    ...mcpFeatureCommands(st),
    ...askCommands(st),
    ...definedCommands(st),
    ...agentCommands(st),
    ...dataCommands(st),
    ...attachmentCommands(st),
    ...searchCommandsFake(st),
    // The report also has 90 days of made-up history, so the Usage chart looks like a used app's.
    ...withHistory(usageCommands(st)),
    // What the isolation hook sends instead of a call it refused: it always fails, as in the shell.
    refusedCall: async (command: string, reason: string) => {
      throw fakeOnlyError('badRequest', `The app refused the call to \`${command}\`: ${reason}.`);
    },
  };
}
