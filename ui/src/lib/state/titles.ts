/**
 * Titles of new chats. After a new chat's first answer completed, the shell can ask the chat's
 * model for a short title (2 to 6 words); it leaves the title alone when the settings say
 * `chats.titles: "firstLine"` or the person renamed the chat, and answers with the title the chat
 * has either way.
 */
import type { Backend } from '../ipc/backend';

/**
 * Asks for a generated title when `wasNew` (this was the chat's first turn, and its answer
 * completed). Resolves with the chat's title afterwards, or null when nothing was asked or the
 * request failed (best effort: the first-line title stays, and no error is shown).
 */
export async function maybeGenerateTitle(api: Pick<Backend, 'generateTitle'>, conversationId: string | null | undefined, wasNew: boolean): Promise<string | null> {
  if (!wasNew || !conversationId) return null;
  try {
    const title = (await api.generateTitle(conversationId)).trim();
    return title || null;
  } catch {
    return null;
  }
}
