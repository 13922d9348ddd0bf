/**
 * What one fake backend holds while it runs: conversations and running turns, tool sources,
 * agents, provider profiles, settings and keys. Every part of the fake reads and changes this one
 * object, as the shell's commands share one service.
 */
import type { AgentConfig, ApprovalChoice, BudgetChoice, ChatGrant, ChatSetup, ConversationSummary, KeychainStatus, KeyMode, ProviderProfile, Settings, StoredCompaction, StoredMessage, Toolset } from '../bindings';
import type { AskAnswer } from './asks';
import type { FakeBlob } from './attachments';
import type { FakeDefined } from './defined';
import type { FakeMcp } from './mcp';
import type { FakeMcpExtras } from './mcpFeatures';
import type { FakeOpenApi, FakePicks } from './openapi';
import type { FakeOptions } from './options';

export interface FakeConversation {
  summary: ConversationSummary;
  /** Every message of its tree, in insertion order (./tree.ts). */
  messages: StoredMessage[];
  /** The leaf of the current path (`undefined`: the last message; `null`: none). */
  head?: string | null;
  /** When each message was last put on the current path (the fake's clock). */
  chosenAt: Map<string, number>;
  disabled: Set<string>;
  /** The person renamed it: generate_title leaves the title alone. */
  renamed?: boolean;
  /** Its own instructions. */
  instructions?: string;
  /** The agent it runs. */
  agent?: string;
  /** Its setup (toolsets, parameters, profile and model), as the service keeps it. */
  setup?: ChatSetup;
  /** What was allowed for this chat only. */
  grants?: ChatGrant[];
  /** Its compaction rows, every branch's, oldest first (the store's table: ./compaction.ts). */
  compactions?: StoredCompaction[];
}

/** A running turn: what it waits for (a delay or an approval) can be cut short by Stop. */
export interface Turn {
  stopped: boolean;
  /** The (replayed) call waiting for the person's choice. */
  asking: string | null;
  wake: ((choice: ApprovalChoice | null) => void) | null;
  /** The budget pause waiting for the person's choice, and how to give it. */
  pausing?: string | null;
  wakeBudget?: ((choice: BudgetChoice | null) => void) | null;
  /** A server's question (elicitation, sampling) waiting for the person, and how to answer it. */
  askingId?: string | null;
  wakeAsk?: ((answer: AskAnswer | null) => void) | null;
}

export interface FakeState {
  readonly opts: FakeOptions;
  /** Milliseconds between replayed events. */
  readonly tick: number;
  /** A fresh id with this prefix. */
  id(prefix: string): string;
  /** A strictly increasing number, for "chosen last" (the store uses the time). */
  clock(): number;
  readonly conversations: Map<string, FakeConversation>;
  readonly running: Map<string, Turn>;
  readonly mcp: FakeMcp[];
  /** Prompts, resources, logs and roots of the MCP servers (./mcpFeatures.ts). */
  readonly mcpExtras: FakeMcpExtras;
  /** Servers imported from another app's config. */
  readonly imported: Set<string>;
  readonly defined: FakeDefined[];
  readonly openApiDocs: FakeOpenApi[];
  /** The files "chosen" in the fake native file dialog, by pick. */
  readonly openApiPicks: FakePicks;
  readonly agentsFile: { agents: AgentConfig[]; toolsets: Toolset[] };
  readonly profiles: ProviderProfile[];
  /**
   * Seeded profiles whose server does not answer (the seeded `lmstudio` one, whose listing fails),
   * until they are saved again. A profile added while the fake runs reaches the LM Studio that
   * detect_local_servers finds (unless `noLocalServers`).
   */
  readonly stale: Set<string>;
  settings: Settings;
  /** The stores hold values; nothing in the fake ever returns one. */
  readonly stores: Record<KeyMode, Map<string, string>>;
  keychain: KeychainStatus;
  /** Attached files by id (SHA-256), as the store keeps them (./attachments.ts). */
  readonly blobs: Map<string, FakeBlob>;
}
