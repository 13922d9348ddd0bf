/**
 * The composer's attachments before sending (`AttachmentTray`), and the thumbnail cache shared
 * with sent messages (`thumbnail`).
 *
 * A pasted or dropped file is handed to the shell in slices, one file at a time (`upload_begin`,
 * the slices, `upload_finish`): `UPLOAD_BODY_BYTES` request bodies of the shell's `upload` scheme,
 * which never pass through the window's thread, or, where that scheme cannot be reached,
 * `UPLOAD_CHUNK_BYTES` slices as `upload_chunk` calls, so the window draws between calls; the shell sniffs, checks and
 * stores the bytes and answers with the `Attachment` (or the reason it refused them). The paperclip
 * asks the shell's native picker (`attach_pick`): the page never sees a path.
 *
 * Invariants: an item is `ready` only with the shell's `Attachment` (the page never invents one);
 * a refused or failed item stays in the list with its message until the person removes it, and
 * nothing else (the text, the other items) changes; a removed upload is cancelled in the shell.
 */
import type { Backend } from '../ipc/backend';
import type { Attachment, AttachmentKind } from '../ipc/bindings';
import { toIpcError } from '../ipc/errors';
import { guessKind, MAX_ATTACHMENTS, releaseBytes, toBase64, UPLOAD_BODY_BYTES, UPLOAD_CHUNK_BYTES } from '../util/attachments';

/** Sends a slice as a request body of the shell's `upload` scheme; `false`: that path is not there. */
export type SendBytes = (id: string, blob: Blob, end: number) => Promise<boolean>;

export type DraftStatus = 'uploading' | 'ready' | 'error';

/** One item in the composer: a file on its way, attached, or refused. */
export interface DraftItem {
  key: string;
  name: string;
  size: number;
  /** The shell's kind once attached; before, a guess from the browser's type. */
  kind: AttachmentKind;
  status: DraftStatus;
  /** 0..1 of the bytes handed to the shell. */
  progress: number;
  attachment: Attachment | null;
  /** Why it was refused or failed (the shell's words). */
  error: string | null;
}

let seq = 0;
const nextKey = () => `att-${++seq}`;

/** The bytes of a slice of a file (FileReader where `Blob.arrayBuffer` is missing). */
async function readSlice(blob: Blob): Promise<Uint8Array> {
  if (typeof blob.arrayBuffer === 'function') return new Uint8Array(await blob.arrayBuffer());
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(new Uint8Array(reader.result as ArrayBuffer));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'));
    reader.readAsArrayBuffer(blob);
  });
}

export class AttachmentTray {
  items = $state.raw<DraftItem[]>([]);
  /** The native picker is open. */
  picking = $state(false);
  /** Uploads run one after another: this is the end of the chain. */
  private queue: Promise<void> = Promise.resolve();
  /** Items the person removed while they uploaded (their upload stops at the next slice). Not state. */
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private removed = new Set<string>();

  /** `sendBytes`: the `upload` scheme (`uploadBytes`); without it, every slice is an IPC call. */
  constructor(
    private readonly api: Backend,
    private readonly sendBytes: SendBytes = () => Promise.resolve(false),
  ) {}

  /** The attachments ready to send, in order. */
  get ready(): Attachment[] {
    return this.items.flatMap((i) => (i.status === 'ready' && i.attachment ? [i.attachment] : []));
  }

  get uploading(): boolean {
    return this.items.some((i) => i.status === 'uploading');
  }

  get failed(): DraftItem[] {
    return this.items.filter((i) => i.status === 'error');
  }

  /** Whether anything would go with the message (a ready item). */
  get hasReady(): boolean {
    return this.items.some((i) => i.status === 'ready');
  }

  get hasImages(): boolean {
    return this.items.some((i) => i.status !== 'error' && i.kind === 'image');
  }

  private update(key: string, change: Partial<DraftItem>): void {
    this.items = this.items.map((i) => (i.key === key ? { ...i, ...change } : i));
  }

  private room(): number {
    return MAX_ATTACHMENTS - this.items.filter((i) => i.status !== 'error').length;
  }

  private refuse(name: string, size: number, kind: AttachmentKind, error: string): void {
    this.items = [...this.items, { key: nextKey(), name, size, kind, status: 'error', progress: 0, attachment: null, error }];
  }

  /** Files pasted or dropped: each is uploaded in chunks, one file after another. */
  addFiles(files: readonly File[]): Promise<void> {
    for (const file of files) {
      const kind = guessKind(file.name, file.type);
      if (this.room() <= 0) {
        this.refuse(file.name, file.size, kind, `Not attached: a message can carry at most ${MAX_ATTACHMENTS} files.`);
        continue;
      }
      const item: DraftItem = { key: nextKey(), name: file.name, size: file.size, kind, status: 'uploading', progress: 0, attachment: null, error: null };
      this.items = [...this.items, item];
      this.queue = this.queue.then(() => this.upload(item.key, file));
    }
    return this.queue;
  }

  private async upload(key: string, file: File): Promise<void> {
    if (this.removed.delete(key)) return;
    let id: string | null = null;
    try {
      id = await this.api.uploadBegin(file.name, file.size);
      // Request bodies while the scheme takes them; IPC chunks from where it did not.
      let bodies = true;
      for (let at = 0; at < file.size; ) {
        if (this.removed.has(key)) break;
        let sent = 0;
        if (bodies) {
          const slice = file.slice(at, at + UPLOAD_BODY_BYTES);
          if (await this.sendBytes(id, slice, at + slice.size)) sent = slice.size;
          else bodies = false;
        }
        if (!bodies) {
          const bytes = await readSlice(file.slice(at, at + UPLOAD_CHUNK_BYTES));
          const data = toBase64(bytes);
          sent = bytes.length;
          // Encoded: its bytes are freed now, as the upload scheme's are (`releaseBytes`).
          releaseBytes(bytes.buffer as ArrayBuffer);
          await this.api.uploadChunk(id, data);
        }
        if (sent === 0) break;
        at += sent;
        this.update(key, { progress: Math.min(1, at / Math.max(1, file.size)) });
      }
      if (this.removed.delete(key)) {
        await this.api.uploadCancel(id).catch(() => undefined);
        return;
      }
      const attachment = await this.api.uploadFinish(id);
      if (this.removed.delete(key)) return;
      this.settle(key, attachment);
    } catch (e) {
      if (id !== null) void this.api.uploadCancel(id).catch(() => undefined);
      if (this.removed.delete(key)) return;
      this.update(key, { status: 'error', error: toIpcError(e).message });
    }
  }

  /** An item became `attachment`; a second copy of the same file is dropped (one is enough). */
  private settle(key: string, attachment: Attachment): void {
    if (this.items.some((i) => i.key !== key && i.attachment?.id === attachment.id)) {
      this.items = this.items.filter((i) => i.key !== key);
      return;
    }
    this.update(key, { status: 'ready', progress: 1, attachment, kind: attachment.kind, name: attachment.name, size: attachment.size });
  }

  /** An attachment the shell already made (the native picker, an MCP resource). */
  addAttached(attachment: Attachment): void {
    if (this.items.some((i) => i.attachment?.id === attachment.id)) return;
    if (this.room() <= 0) {
      this.refuse(attachment.name, attachment.size, attachment.kind, `Not attached: a message can carry at most ${MAX_ATTACHMENTS} files.`);
      return;
    }
    const key = nextKey();
    this.items = [...this.items, { key, name: attachment.name, size: attachment.size, kind: attachment.kind, status: 'ready', progress: 1, attachment, error: null }];
  }

  /** The paperclip: the shell's native picker; each file it could not attach says why. */
  async pick(): Promise<void> {
    if (this.picking) return;
    this.picking = true;
    try {
      const picked = await this.api.attachPick();
      for (const a of picked.attached) this.addAttached(a);
      for (const r of picked.refused) this.refuse(r.name, 0, guessKind(r.name, ''), r.message);
    } catch (e) {
      const err = toIpcError(e);
      if (err.kind !== 'cancelled') this.refuse('Files', 0, 'text', err.message);
    } finally {
      this.picking = false;
    }
  }

  /** Removes an item (an upload still running is cancelled in the shell). */
  remove(key: string): void {
    const item = this.items.find((i) => i.key === key);
    if (!item) return;
    if (item.status === 'uploading') this.removed.add(key);
    this.items = this.items.filter((i) => i.key !== key);
  }

  /** Takes what goes with the message (the ready attachments); the list is emptied. */
  take(): Attachment[] {
    const ready = this.ready;
    this.items = this.items.filter((i) => i.status === 'uploading');
    return ready;
  }

  /** Puts attachments back (a queued message cancelled into the composer). */
  restore(attachments: readonly Attachment[]): void {
    for (const a of attachments) this.addAttached(a);
  }
}

/** Thumbnails by attachment id (data URLs, or null: none), read once and shared by every view. */
// eslint-disable-next-line svelte/prefer-svelte-reactivity -- a cache of promises, not state
const THUMBNAILS = new Map<string, Promise<string | null>>();
const THUMBNAIL_CACHE = 400;

/** The thumbnail of attachment `id`, read from the shell the first time and cached after. */
export function thumbnail(api: Backend, id: string): Promise<string | null> {
  const known = THUMBNAILS.get(id);
  if (known) return known;
  const read = api.attachmentThumbnail(id).catch(() => {
    THUMBNAILS.delete(id); // a failed read is tried again next time
    return null;
  });
  THUMBNAILS.set(id, read);
  if (THUMBNAILS.size > THUMBNAIL_CACHE) {
    const oldest = THUMBNAILS.keys().next().value;
    if (oldest !== undefined) THUMBNAILS.delete(oldest);
  }
  return read;
}
