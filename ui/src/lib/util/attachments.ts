/**
 * Pure helpers for attachments: how a file is read and sent to the shell in chunks, and how an
 * attachment is described (size, type, pages).
 *
 * Invariant: no IPC call carries more than `UPLOAD_CHUNK_BYTES` of a file (far under the isolation
 * hook's 1 MiB bound for one string), so a large file never becomes one huge IPC message and the
 * window keeps drawing between chunks; the `upload` scheme's requests (`UPLOAD_BODY_BYTES`) are
 * preferred, since their bodies do not pass through the page's thread at all.
 */
import type { Attachment, AttachmentKind } from '../ipc/bindings';

/**
 * Bytes of a file per `upload_chunk` call: 64 KiB. The isolation pattern turns each call's
 * encrypted body into an array of numbers and back on the window's thread, about 0.27 ms per KiB
 * (the desktop bench `attach`): a 768 KiB slice held a frame for 160-360 ms, a 64 KiB one about
 * 20 ms. The per-call overhead makes a file slower (a 20 MB PDF and a 5.6 MB photo: 17-18 s
 * instead of 12 s): a bigger slice trades frames for speed.
 */
export const UPLOAD_CHUNK_BYTES = 64 * 1024;

/**
 * Bytes of a file per request of the shell's `upload` scheme (`uploadBytes`): 4 MiB, under the
 * shell's 8 MiB bound. The body never crosses the window's thread, so only memory bounds it.
 */
export const UPLOAD_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Frees `buffer`'s bytes now (it is detached, by `ArrayBuffer.prototype.transfer(0)`), not when the
 * garbage collector next runs: WebKit collects rarely while a page allocates little else, so an
 * upload's slices stayed in the window's process until then (+35 MB in the desktop bench
 * `attach`, +13 MB with this). A web engine without `transfer` keeps them until collected.
 */
export function releaseBytes(buffer: ArrayBuffer): void {
  const transfer = (buffer as { transfer?: (length: number) => ArrayBuffer }).transfer;
  try {
    transfer?.call(buffer, 0);
  } catch {
    // Already detached: nothing is held.
  }
}

/** The most files one message may carry (the composer refuses more, with a message). */
export const MAX_ATTACHMENTS = 20;

/** Base64 of `bytes`, built in pieces (a spread of a large array overflows the call stack). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) binary += String.fromCharCode(...bytes.subarray(i, i + step));
  return btoa(binary);
}

/** The bytes of base64 `text` (throws on bad input). */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * A size as the engine writes it (`size_text`): "812 bytes", "14.2 KB", "3.4 MB" (1024-based, as
 * the stated limits are), so a chip, a resource and a refusal name one file's size alike.
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** The short type shown on a chip: "PDF", "PNG", "Markdown", "TXT". */
export function typeLabel(a: Pick<Attachment, 'name' | 'mimeType' | 'kind'>): string {
  if (a.kind === 'pdf') return 'PDF';
  const sub = a.mimeType.split('/')[1]?.split(';')[0] ?? '';
  if (a.kind === 'image') return sub.replace(/^x-/, '').toUpperCase() || 'Image';
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(a.name)?.[1];
  if (sub === 'markdown' || ext === 'md') return 'Markdown';
  return ext ? ext.toUpperCase() : 'Text';
}

/** What a chip says under the name: "PDF · 12 pages · 1.2 MB", "PNG · 1920×1080 · 340 KB", "PDF · 40 pages · text cut · 9 MB". */
export function describeAttachment(a: Attachment): string {
  const parts = [typeLabel(a)];
  if (a.kind === 'pdf' && a.pages !== undefined) parts.push(`${a.pages} ${a.pages === 1 ? 'page' : 'pages'}`);
  if (a.textNote) parts.push('text cut');
  if (a.kind === 'image' && a.width && a.height) parts.push(`${a.width}×${a.height}`);
  parts.push(formatSize(a.size));
  return parts.join(' · ');
}

/** Why a PDF's extracted text is not all of it, as a sentence ("Text of pages 1–12 of 40 only: …."), or null. */
export function textCutSentence(a: Pick<Attachment, 'textNote'>): string | null {
  const note = a.textNote?.trim();
  if (!note) return null;
  return `${note.charAt(0).toUpperCase()}${note.slice(1)}${/[.!?]$/.test(note) ? '' : '.'}`;
}

/** The kind a file will probably be, from what the browser says (the shell decides from the bytes). */
export function guessKind(name: string, type: string): AttachmentKind {
  if (type.startsWith('image/')) return 'image';
  if (type === 'application/pdf' || /\.pdf$/i.test(name)) return 'pdf';
  return 'text';
}

/** A name for a pasted image that came without one ("Pasted image 14-32-05.png"). */
export function pastedName(type: string, now: Date = new Date()): string {
  const ext = (type.split('/')[1] ?? 'png').replace('jpeg', 'jpg').replace(/[^a-z0-9]/gi, '') || 'png';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `Pasted image ${pad(now.getHours())}-${pad(now.getMinutes())}-${pad(now.getSeconds())}.${ext}`;
}

/**
 * Whether a model can take images: `false` only when the model's capabilities say so (unknown is
 * allowed: the service decides and says why).
 */
export function refusesImages(capabilities: { images: boolean | null } | null | undefined): boolean {
  return capabilities?.images === false;
}

/** The composer's warning for a model that cannot see images (the service's words). */
export function cannotSeeImages(model: string): string {
  return `${model} can't see images — remove them or pick another model`;
}
