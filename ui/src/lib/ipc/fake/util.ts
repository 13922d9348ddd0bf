/** Small helpers the fake's parts share: URLs, names, titles and file names as the shell makes them. */

export const DATA_DIR = '/home/you/.local/share/switchboard';

/** What LM Studio lists when the fake's detection finds it. */
export const LMSTUDIO_MODELS = ['qwen2.5-7b-instruct', 'llama-3.2-3b-instruct', 'phi-4'];

/** A file name from a title, like the shell's (lower case, dashes, at most 60 characters). */
export function fileStem(title: string): string {
  const stem = title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return stem || 'conversation';
}

const TITLE_FILLER = new Set(['a', 'an', 'the', 'is', 'it', 'in', 'me', 'my', 'of', 'to', 'and', 'or', 'for', 'please', 'can', 'you', 'what', 'how', 'i', 'do', 'does', 'with', 'about']);

/** A short title as a model might give one: the first few words that say something, capitalized. */
export function shortTitle(text: string): string {
  const words = text
    .replace(/[^\p{L}\p{N}\s'-]+/gu, ' ')
    .split(/\s+/)
    .filter((w) => w && !TITLE_FILLER.has(w.toLowerCase()));
  const picked = (words.length >= 2 ? words : text.split(/\s+/).filter(Boolean)).slice(0, 5);
  const title = picked.join(' ');
  return title ? title.charAt(0).toUpperCase() + title.slice(1) : 'New chat';
}
export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== '';
  } catch {
    return false;
  }
}

export function envVarFor(name: string): string {
  return `SWITCHBOARD_KEY_${name.toUpperCase().replaceAll('-', '_')}`;
}

export const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
