/**
 * Organising chats: pinning (kept at the top) and archiving (kept out of the main list, still found
 * by search), and how the sidebar groups the list. The shell stores both flags; the list the app
 * holds is updated in place so the sidebar moves the chat at once.
 */
import type { Backend } from '../ipc/backend';
import type { ConversationSummary, IpcError } from '../ipc/bindings';
import { toIpcError } from '../ipc/errors';

/** What organising needs from the app (`AppState` has all of it). */
export interface OrganiseHost {
  readonly api: Backend;
  conversations: ConversationSummary[];
  toast(error: IpcError | string, title?: string): void;
}

function patch(host: OrganiseHost, id: string, change: Partial<ConversationSummary>): void {
  host.conversations = host.conversations.map((c) => (c.id === id ? { ...c, ...change } : c));
}

/** Pins or unpins a chat; resolves with whether the shell stored it (a failure is a toast). */
export async function setPinned(host: OrganiseHost, id: string, pinned: boolean): Promise<boolean> {
  try {
    await host.api.setConversationPinned(id, pinned);
    patch(host, id, { pinned });
    return true;
  } catch (e) {
    host.toast(toIpcError(e), pinned ? 'Could not pin the chat' : 'Could not unpin the chat');
    return false;
  }
}

/** Archives (which unpins) or unarchives a chat; resolves with whether the shell stored it. */
export async function setArchived(host: OrganiseHost, id: string, archived: boolean): Promise<boolean> {
  try {
    await host.api.setConversationArchived(id, archived);
    patch(host, id, archived ? { archived, pinned: false } : { archived });
    return true;
  } catch (e) {
    host.toast(toIpcError(e), archived ? 'Could not archive the chat' : 'Could not unarchive the chat');
    return false;
  }
}

export interface ListGroup {
  /** Stable key ("pinned", "today", ..., "results"). */
  key: string;
  label: string;
  items: ConversationSummary[];
}

export interface OrganisedList {
  /** Pinned, then Today / Yesterday / Previous 7 days / Older (or one "Results" group while searching). */
  groups: ListGroup[];
  /** Archived chats, newest first (empty while searching: results include them in place). */
  archived: ConversationSummary[];
}

const DAY = 86_400_000;

/**
 * The sidebar's groups. Searching shows one ranked "Results" group, archived chats included (the
 * row says it is archived); otherwise pinned chats come first, archived ones go to `archived`.
 */
export function organise(list: ConversationSummary[], searching: boolean, now = new Date()): OrganisedList {
  if (searching) return { groups: list.length > 0 ? [{ key: 'results', label: 'Results', items: list }] : [], archived: [] };
  const newest = (a: ConversationSummary, b: ConversationSummary) => b.updatedAt - a.updatedAt;
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const groups: ListGroup[] = [
    { key: 'pinned', label: 'Pinned', items: [] },
    { key: 'today', label: 'Today', items: [] },
    { key: 'yesterday', label: 'Yesterday', items: [] },
    { key: 'week', label: 'Previous 7 days', items: [] },
    { key: 'older', label: 'Older', items: [] },
  ];
  const archived: ConversationSummary[] = [];
  for (const c of [...list].sort(newest)) {
    if (c.archived) archived.push(c);
    else if (c.pinned) groups[0]?.items.push(c);
    else {
      const i = c.updatedAt >= today ? 1 : c.updatedAt >= today - DAY ? 2 : c.updatedAt >= today - 7 * DAY ? 3 : 4;
      groups[i]?.items.push(c);
    }
  }
  return { groups: groups.filter((g) => g.items.length > 0), archived };
}
