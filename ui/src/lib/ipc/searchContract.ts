/**
 * The message search's types as the contract names them (issue 25, item 4): `search_messages`.
 * The shell's command and `bindings.ts` are generated once the service has it; until then the UI
 * reaches it through `searchCommands`, which reads the method off the backend (the fake has it; a
 * backend without it finds nothing in messages).
 */
import type { Backend } from './backend';

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
}

/** The search commands of `api` (see the module comment). */
export function searchCommands(api: Backend): SearchCommands {
  const a = api as unknown as Partial<SearchCommands>;
  return {
    searchMessages: (query, limit) => {
      if (typeof a.searchMessages !== 'function') return Promise.resolve([]);
      return a.searchMessages.call(api, query, limit);
    },
  };
}
