/**
 * Attachments in the fake: chunked uploads, the native picker, previews and thumbnails, over one
 * content-addressed blob map (`FakeState.blobs`, by SHA-256 like the store).
 *
 * Its errors are the service's (errors.generated.json) where the generator can make them; the
 * rest (per-kind sizes, bombs, encrypted or damaged PDFs) are written in switchboard_media's words.
 * It checks what the shell checks, in the same order and with the same kinds: a chunk bigger than
 * the isolation hook lets through, more bytes than announced, the size limit per kind, the type
 * sniffed from the bytes (PNG, JPEG, GIF, WebP, PDF, UTF-8 text; SVG and other binaries refused),
 * an image that does not decode or claims too many pixels, an encrypted PDF. It reads image sizes
 * from their headers and a PDF's pages and text with a rough scan; it never scales: a thumbnail
 * and a preview are the image itself.
 */
import type { Backend } from '../backend';
import type { Attachment, AttachmentKind } from '../bindings';
import { formatSize, fromBase64, toBase64 } from '../../util/attachments';
import { fakeOnlyError, ipcError } from './errors';
import type { FakeState } from './state';

/** A stored file: its reference, bytes and extracted text. */
export interface FakeBlob {
  attachment: Attachment;
  bytes: Uint8Array;
  text: string | null;
}

interface Upload {
  name: string;
  size: number;
  chunks: Uint8Array[];
  received: number;
}

/** The most characters one chunk may carry (the isolation hook's bound for a string). */
const MAX_CHUNK_CHARS = 1 << 20;
const MB = 1024 * 1024;
/** What may be attached, per kind (and any file before its kind is known): switchboard_media's limits. */
export const FAKE_LIMITS: Record<AttachmentKind | 'any', number> = { image: 30 * MB, pdf: 50 * MB, text: 10 * MB, any: 50 * MB };
/** An image claiming more pixels than this is refused as a decompression bomb. */
const MAX_PIXELS = 50_000_000;
/** The most text kept of a PDF's text layer (the service's `MAX_PDF_TEXT`); tests lower it. */
export const FAKE_PDF_TEXT = { max: 8 * MB };
/** A preview's text at most (the rest is cut, `truncated`). */
const PREVIEW_CHARS = 1 << 20;


function refuse(message: string) {
  return fakeOnlyError('badRequest', message);
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle) {
    const digest = new Uint8Array(await subtle.digest('SHA-256', new Uint8Array(bytes)));
    return [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
  }
  // No Web Crypto (an old test environment): a stable stand-in of the same shape.
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0').repeat(8);
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((v, i) => b[at + i] === v);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
const be32 = (b: Uint8Array, at: number) => (((b[at] ?? 0) << 24) | ((b[at + 1] ?? 0) << 16) | ((b[at + 2] ?? 0) << 8) | (b[at + 3] ?? 0)) >>> 0;
const be16 = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const le16 = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);

/** An image's type and size from its header; null when it is not one of the four. */
function imageHeader(b: Uint8Array): { mime: string; size: [number, number] | null } | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) {
    return { mime: 'image/png', size: b.length >= 24 && ascii(b, 12, 16) === 'IHDR' ? [be32(b, 16), be32(b, 20)] : null };
  }
  if (startsWith(b, [0xff, 0xd8, 0xff])) {
    let at = 2;
    while (at + 9 < b.length) {
      if (b[at] !== 0xff) return { mime: 'image/jpeg', size: null };
      const marker = b[at + 1] ?? 0;
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) return { mime: 'image/jpeg', size: [be16(b, at + 7), be16(b, at + 5)] };
      at += 2 + be16(b, at + 2);
    }
    return { mime: 'image/jpeg', size: null };
  }
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return { mime: 'image/gif', size: b.length >= 10 ? [le16(b, 6), le16(b, 8)] : null };
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') {
    const chunk = ascii(b, 12, 16);
    if (chunk === 'VP8X' && b.length >= 30) return { mime: 'image/webp', size: [1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)), 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16))] };
    if (chunk === 'VP8 ' && b.length >= 30) return { mime: 'image/webp', size: [le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff] };
    if (chunk === 'VP8L' && b.length >= 25) {
      const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
      return { mime: 'image/webp', size: [(bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1] };
    }
    return { mime: 'image/webp', size: null };
  }
  return null;
}

/** A PDF's pages and text, read roughly: `/Type /Page` objects and the strings of `Tj`/`TJ`. */
function scanPdf(b: Uint8Array): { pages: number; text: string | null; textNote?: string; encrypted: boolean; damaged: boolean } {
  const s = new TextDecoder('latin1').decode(b);
  const pages = (s.match(/\/Type\s*\/Page(?!s)/g) ?? []).length;
  const strings = [...s.matchAll(/\(((?:\\.|[^\\)])*)\)\s*Tj/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1'));
  let text = strings.join('\n').trim();
  let textNote: string | undefined;
  if (text.length > FAKE_PDF_TEXT.max) {
    // Each string counts as a page here; the service reads page by page and cuts the last one.
    let read = 0;
    for (let len = 0; read < strings.length && len <= FAKE_PDF_TEXT.max; read++) len += (strings[read] ?? '').length + 1;
    read = Math.max(1, Math.min(read, pages));
    text = text.slice(0, FAKE_PDF_TEXT.max);
    textNote = `text of ${read === 1 ? 'page 1' : `pages 1–${read}`} of ${pages} only (page ${read} cut short): extraction stopped at the size limit (${formatSize(FAKE_PDF_TEXT.max)})`;
  }
  return { pages, text: text || null, ...(textNote ? { textNote } : {}), encrypted: /\/Encrypt\b/.test(s), damaged: !/%%EOF\s*$/.test(s.slice(-1024)) && pages === 0 };
}

/** What the shell's inspection makes of `bytes` named `name`: the reference and extracted text, or its refusal. */
async function inspect(name: string, bytes: Uint8Array): Promise<FakeBlob> {
  if (bytes.length === 0) throw ipcError('attachEmpty', { name });
  const id = await sha256(bytes);
  const image = imageHeader(bytes);
  if (image) {
    if (bytes.length > FAKE_LIMITS.image) throw refuse(`${name} is too large to attach (${formatSize(bytes.length)}): an image can be at most ${formatSize(FAKE_LIMITS.image)}.`);
    if (!image.size || image.size[0] === 0 || image.size[1] === 0) throw ipcError('attachBadImage', { name });
    const [width, height] = image.size;
    if (width * height > MAX_PIXELS) throw refuse(`${name} says it is ${width} × ${height} pixels, more than Switchboard opens (${MAX_PIXELS / 1_000_000} megapixels, 20000 pixels a side): scale it down and attach it again.`);
    return { attachment: { id, name, mimeType: image.mime, kind: 'image', size: bytes.length, width, height }, bytes, text: null };
  }
  if (ascii(bytes, 0, 5) === '%PDF-') {
    if (bytes.length > FAKE_LIMITS.pdf) throw ipcError('attachTooLarge', { name, size: formatSize(bytes.length) });
    const pdf = scanPdf(bytes);
    if (pdf.encrypted) throw refuse(`encrypted PDF: ${name} needs a password to open; save a copy without the password and attach that.`);
    if (pdf.damaged) throw refuse(`damaged PDF: ${name} can't be read (no pages); open it in a PDF viewer and save or print it to a new PDF.`);
    return { attachment: { id, name, mimeType: 'application/pdf', kind: 'pdf', size: bytes.length, pages: pdf.pages, ...(pdf.textNote ? { textNote: pdf.textNote } : {}) }, bytes, text: pdf.text };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw ipcError('attachUnsupported', { name });
  }
  if (text.includes('\u0000')) throw ipcError('attachUnsupported', { name });
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(text)) throw ipcError('attachSvg', { name });
  if (bytes.length > FAKE_LIMITS.text) throw refuse(`${name} is too large to attach (${formatSize(bytes.length)}): a text file can be at most ${formatSize(FAKE_LIMITS.text)}.`);
  const mime = /\.md$/i.test(name) ? 'text/markdown' : /\.json$/i.test(name) ? 'application/json' : /\.csv$/i.test(name) ? 'text/csv' : 'text/plain';
  return { attachment: { id, name, mimeType: mime, kind: 'text', size: bytes.length }, bytes, text };
}

/** A small PNG the fake's picker offers (a 2×2 image), so the dev app has something to show. */
const SAMPLE_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGM4YWNjU3GHAUIBACZWBaHamqAcAAAAAElFTkSuQmCC';

/** The files the fake "native picker" returns (and one it cannot attach). */
const PICKED: [string, () => Uint8Array][] = [
  ['diagram.png', () => fromBase64(SAMPLE_PNG)],
  ['notes.md', () => new TextEncoder().encode('# Notes\n\n- The fake picker chose this file.\n- It is sent as text, named.\n')],
  ['archive.zip', () => new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0])],
];

/** Stores a file (idempotent by id, like the store) and returns its reference. */
export async function putBlob(st: FakeState, name: string, bytes: Uint8Array): Promise<Attachment> {
  const blob = await inspect(name, bytes);
  const known = st.blobs.get(blob.attachment.id);
  if (known) return { ...known.attachment, name };
  st.blobs.set(blob.attachment.id, blob);
  return { ...blob.attachment };
}

/** The attachment `id`, or the service's notFound. */
export function blobOf(st: FakeState, id: string): FakeBlob {
  const b = st.blobs.get(id);
  if (!b) throw ipcError('attachmentNotFound', { id });
  return b;
}

type AttachmentCommands = 'attachPick' | 'uploadBegin' | 'uploadChunk' | 'uploadFinish' | 'uploadCancel' | 'attachmentPreview' | 'attachmentThumbnail';

export function attachmentCommands(st: FakeState): Pick<Backend, AttachmentCommands> {
  const uploads = new Map<string, Upload>();
  const upload = (id: string) => {
    const u = uploads.get(id);
    if (!u) throw ipcError('uploadNotFound', { id });
    return u;
  };
  return {
    async attachPick() {
      const attached: Attachment[] = [];
      const refused: { name: string; message: string }[] = [];
      for (const [name, bytes] of st.opts.attachPicks ?? PICKED) {
        try {
          attached.push(await putBlob(st, name, bytes()));
        } catch (e) {
          refused.push({ name, message: (e as { message: string }).message });
        }
      }
      return { attached, refused };
    },
    async uploadBegin(name, size) {
      if (!Number.isSafeInteger(size) || size < 0) throw refuse(`The size of ${name} is not a number of bytes.`);
      if (size === 0) throw ipcError('attachEmpty', { name });
      if (size > FAKE_LIMITS.any) throw ipcError('attachTooLarge', { name, size: formatSize(size) });
      const id = st.id('up');
      uploads.set(id, { name, size, chunks: [], received: 0 });
      return id;
    },
    async uploadChunk(id, data) {
      if (data.length > MAX_CHUNK_CHARS) {
        uploads.delete(id);
        throw ipcError('uploadChunkTooLarge');
      }
      const u = upload(id);
      let bytes: Uint8Array;
      try {
        bytes = fromBase64(data);
      } catch {
        uploads.delete(id);
        throw refuse('An upload chunk is not base64.');
      }
      if (u.received + bytes.length > u.size) {
        uploads.delete(id);
        throw ipcError('uploadOverSize', { name: u.name });
      }
      u.chunks.push(bytes);
      u.received += bytes.length;
    },
    async uploadFinish(id) {
      const u = upload(id);
      uploads.delete(id);
      if (u.received !== u.size) throw refuse(`${u.name} arrived incomplete (${formatSize(u.received)} of ${formatSize(u.size)}): attach it again.`);
      const all = new Uint8Array(u.size);
      let at = 0;
      for (const c of u.chunks) {
        all.set(c, at);
        at += c.length;
      }
      return putBlob(st, u.name, all);
    },
    async uploadCancel(id) {
      uploads.delete(id);
    },
    async attachmentPreview(id) {
      const b = blobOf(st, id);
      const a = { ...b.attachment };
      if (a.kind === 'image') return { attachment: a, text: null, truncated: false, image: `data:${a.mimeType};base64,${toBase64(b.bytes)}` };
      const text = b.text;
      return { attachment: a, text: text === null ? null : text.slice(0, PREVIEW_CHARS), truncated: text !== null && text.length > PREVIEW_CHARS, image: null };
    },
    async attachmentThumbnail(id) {
      const b = blobOf(st, id);
      return b.attachment.kind === 'image' ? `data:${b.attachment.mimeType};base64,${toBase64(b.bytes)}` : null;
    },
  };
}
