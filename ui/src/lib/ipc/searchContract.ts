/**
 * The search commands' types as the contract names them (issue 25, item 4): `search_messages` and
 * `switch_version`. The shell's commands and `bindings.ts` are generated once the service has
 * them; until then the UI reaches them through `searchCommands`, which reads the methods off the
 * backend (the fake has `searchMessages`; a backend without `switchVersion` opens the conversation
 * as it is).
 */
import type { Backend } from './backend';
import type { ConversationView } from './bindings';

/** Where a hit matched. */
export type SearchHitKind = 'title' | 'message' | 'toolArguments' | 'toolResult';

/** One place a search matched. `snippet` wraps each match in U+E000 … U+E001. */
export interface SearchHit {
  conversationId: string;
  title: string;
  messageId?: string | null;
  toolCallId?: string | null;
  kind: SearchHitKind;
  role?: string | null;
  snippet: string;
  /** Whether the message is on the conversation's current path (else it is on another version). */
  onCurrentPath: boolean;
  createdAt: number;
}

export interface SearchCommands {
  searchMessages(query: string, limit?: number | null): Promise<SearchHit[]>;
  switchVersion?(conversationId: string, messageId: string): Promise<ConversationView>;
}

/** The search commands of `api` (see the module comment). */
export function searchCommands(api: Backend): SearchCommands {
  const a = api as unknown as Partial<SearchCommands>;
  return {
    searchMessages: (query, limit) => {
      if (typeof a.searchMessages !== 'function') return Promise.resolve([]);
      return a.searchMessages.call(api, query, limit);
    },
    ...(typeof a.switchVersion === 'function' ? { switchVersion: (cid: string, mid: string) => (a.switchVersion as NonNullable<SearchCommands['switchVersion']>).call(api, cid, mid) } : {}),
  };
}
