/**
 * Attachments in the composer (paste, drop, the paperclip, remove, refusals that keep the text,
 * the warning for a model that cannot see images, the preview) and in sent messages (thumbnails
 * read lazily once per id, live and after reopening).
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { SendRequest } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { FAKE_PDF_TEXT } from '../src/lib/ipc/fake/attachments';
import { AppState } from '../src/lib/state/app.svelte';
import { formatSize, fromBase64, releaseBytes, toBase64, UPLOAD_BODY_BYTES, UPLOAD_CHUNK_BYTES } from '../src/lib/util/attachments';

const schedule = (cb: () => void) => setTimeout(cb, 0);

/** A 2×2 PNG. */
const PNG = fromBase64('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGM4YWNjU3GHAUIBACZWBaHamqAcAAAAAElFTkSuQmCC');

/** A one-page PDF with a text layer. */
const PDF = new TextEncoder().encode(
  '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n' +
    '3 0 obj << /Type /Page /Parent 2 0 R /Contents 4 0 R >> endobj\n4 0 obj << /Length 44 >> stream\nBT /F1 12 Tf 72 712 Td (Quarterly report: revenue up 12%) Tj ET\nendstream endobj\n' +
    'trailer << /Root 1 0 R >>\n%%EOF\n',
);

const ENCRYPTED_PDF = new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type /Page >> endobj\ntrailer << /Encrypt 5 0 R >>\n%%EOF\n');

function file(bytes: Uint8Array | string, name: string, type: string): File {
  return new File([typeof bytes === 'string' ? bytes : new Uint8Array(bytes)], name, { type });
}

async function start(backend: Backend = createFakeBackend({ tickMs: 0, empty: true })) {
  const app = new AppState(backend, { schedule });
  const view = render(App, { props: { app } });
  await app.init();
  return { app, view, backend };
}

function input(): HTMLTextAreaElement {
  return screen.getByTestId('composer-input') as HTMLTextAreaElement;
}

async function type(text: string) {
  const el = input();
  el.value = text;
  await fireEvent.input(el);
}

async function paste(files: File[], text = '') {
  await fireEvent.paste(input(), { clipboardData: { files, items: [], types: ['Files'], getData: (t: string) => (t === 'text/plain' ? text : '') } });
}

async function drop(files: File[]) {
  await fireEvent.drop(window, { dataTransfer: { files, types: ['Files'] } });
}

function items(): HTMLElement[] {
  const tray = screen.queryAllByTestId('attachments');
  return tray.length ? within(tray[0]!).queryAllByTestId('attachment') : [];
}

async function settled(n: number) {
  await waitFor(() => {
    expect(items()).toHaveLength(n);
    expect(items().every((i) => i.dataset.status !== 'uploading')).toBe(true);
  });
}

function sendButton(): HTMLButtonElement {
  return screen.getByTestId('send-button') as HTMLButtonElement;
}

beforeEach(() => {
  localStorage.clear();
});

describe('attaching in the composer', () => {
  it('a pasted image and a dropped PDF are attached, sent with the text and shown in the message, live and reopened', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const sendSpy = vi.spyOn(backend, 'sendMessage');
    const chunk = vi.spyOn(backend, 'uploadChunk');
    const { app } = await start(backend);
    await type('What do these show?');
    await paste([file(PNG, 'image.png', 'image/png')]);
    await drop([file(PDF, 'report.pdf', 'application/pdf')]);
    await settled(2);
    const [img, pdf] = items();
    expect(img!.dataset.kind).toBe('image');
    expect(img!.dataset.name).toMatch(/^Pasted image \d\d-\d\d-\d\d\.png$/);
    await waitFor(() => expect(within(img!).getByTestId('attachment-thumb').dataset.loaded).toBe('true'));
    // A thumbnail shows no size: its tooltip says what it is.
    expect(within(img!).getByRole('button', { name: /Open the preview/ }).getAttribute('title')).toMatch(/\nPNG · \d+×\d+ · \d+ bytes$/);
    expect(pdf!.dataset.kind).toBe('pdf');
    expect(within(pdf!).getByTestId('attachment-meta').textContent).toMatch(/^PDF · 1 page · \d+ bytes$/);
    expect(chunk).toHaveBeenCalledTimes(2);

    await fireEvent.click(sendButton());
    await waitFor(() => expect(sendSpy).toHaveBeenCalledTimes(1));
    const request = sendSpy.mock.calls[0]![0] as SendRequest;
    expect(request.text).toBe('What do these show?');
    expect(request.attachments).toEqual([img!.dataset.id, pdf!.dataset.id]);
    // The composer is empty again; the message shows the files above its text.
    expect(input().value).toBe('');
    expect(screen.queryByTestId('attachments')).toBeNull();
    const shown = () => within(screen.getAllByTestId('message').find((m) => m.dataset.role === 'user')!).getAllByTestId('attachment');
    expect(shown().map((e) => e.dataset.kind)).toEqual(['image', 'pdf']);
    await waitFor(() => expect(app.current.running).toBe(false));

    // Reopened from the store: the same.
    const id = app.current.conversationId!;
    app.newChat();
    await app.open(id);
    await waitFor(() => expect(shown().map((e) => e.dataset.name)).toEqual([img!.dataset.name, 'report.pdf']));
  });

  it('a file too big for one call goes in slices of at most 64 KiB (each a short task for the window)', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const chunk = vi.spyOn(backend, 'uploadChunk');
    await start(backend);
    const text = 'a line of a long log file\n'.repeat(Math.ceil((UPLOAD_CHUNK_BYTES * 2.5) / 26));
    await drop([file(text, 'server.log', 'text/plain')]);
    await settled(1);
    expect(items()[0]!.dataset.status).toBe('ready');
    expect(chunk).toHaveBeenCalledTimes(3);
    for (const [, data] of chunk.mock.calls) expect(fromBase64(data as string).length).toBeLessThanOrEqual(64 * 1024);
  });

  it("a large file goes as request bodies of the shell's upload scheme, and as IPC slices from where that scheme fails", async () => {
    for (const schemeWorks of [2, 1]) {
      const backend = createFakeBackend({ tickMs: 0, empty: true });
      // The shell's side of the scheme: the fake takes the bytes the way the real one would.
      const take = backend.uploadChunk.bind(backend);
      const chunk = vi.spyOn(backend, 'uploadChunk');
      const bodies: number[] = [];
      const sendBytes = async (id: string, blob: Blob) => {
        if (bodies.length >= schemeWorks) return false;
        bodies.push(blob.size);
        const bytes = new Uint8Array(await blob.arrayBuffer());
        for (let at = 0; at < bytes.length; at += UPLOAD_CHUNK_BYTES) await take(id, toBase64(bytes.subarray(at, at + UPLOAD_CHUNK_BYTES)));
        return true;
      };
      const app = new AppState(backend, { schedule, sendBytes });
      const view = render(App, { props: { app } });
      await app.init();
      const text = 'a line of a long log file\n'.repeat(Math.ceil((UPLOAD_BODY_BYTES * 2.2) / 26));
      await drop([file(text, 'server.log', 'text/plain')]);
      await settled(1);
      expect(items()[0]!.dataset.status).toBe('ready');
      expect(app.attachments.ready[0]!.size).toBe(text.length);
      if (schemeWorks === 2) {
        // Three bodies would carry it; the first two did, the rest went as IPC slices (the spy
        // counts the tray's calls only: the fake shell's intake was bound before it).
        expect(bodies).toEqual([UPLOAD_BODY_BYTES, UPLOAD_BODY_BYTES]);
        expect(chunk).toHaveBeenCalledTimes(Math.ceil((text.length - 2 * UPLOAD_BODY_BYTES) / UPLOAD_CHUNK_BYTES));
      } else {
        expect(bodies).toEqual([UPLOAD_BODY_BYTES]);
        expect(chunk).toHaveBeenCalledTimes(Math.ceil((text.length - UPLOAD_BODY_BYTES) / UPLOAD_CHUNK_BYTES));
      }
      view.unmount();
    }
  });

  it('a refused file says why, and the text and the other attachments stay', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const sendSpy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    await type('Keep this text');
    await drop([
      file(ENCRYPTED_PDF, 'secret.pdf', 'application/pdf'),
      file('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'logo.svg', 'image/svg+xml'),
      file(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]), 'broken.png', 'image/png'),
      file('# Plan\n', 'plan.md', 'text/markdown'),
    ]);
    await settled(4);
    const errors = items().filter((i) => i.dataset.status === 'error');
    expect(errors.map((e) => within(e).getByTestId('attachment-error').textContent)).toEqual([
      'encrypted PDF: secret.pdf needs a password to open; save a copy without the password and attach that.',
      'logo.svg is an SVG image, which can carry scripts and is not sent: export it as PNG and attach that.',
      "broken.png doesn't decode as an image: its data is damaged or cut short. Open it in an image editor and save it again.",
    ]);
    expect(input().value).toBe('Keep this text');
    // Only what was attached goes; the refused ones stay to be read and removed.
    await fireEvent.click(sendButton());
    await waitFor(() => expect(sendSpy).toHaveBeenCalledTimes(1));
    expect((sendSpy.mock.calls[0]![0] as SendRequest).attachments).toHaveLength(1);
  });

  it('removing an item leaves the text and the others', async () => {
    await start();
    await type('Two files');
    await drop([file('one', 'one.txt', 'text/plain'), file('two', 'two.txt', 'text/plain')]);
    await settled(2);
    await fireEvent.click(within(items()[0]!).getByTestId('attachment-remove'));
    expect(items().map((i) => i.dataset.name)).toEqual(['two.txt']);
    expect(input().value).toBe('Two files');
  });

  it('files alone can be sent; nothing at all cannot; while a file uploads the button says why', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const finish = backend.uploadFinish;
    backend.uploadFinish = async (id) => {
      await gate;
      return finish(id);
    };
    await start(backend);
    expect(sendButton().disabled).toBe(true);
    await type('with a file');
    await drop([file('data', 'data.csv', 'text/csv')]);
    await waitFor(() => expect(sendButton().title).toBe('Cannot send: Wait until the files are attached'));
    expect(sendButton().disabled).toBe(true);
    expect(screen.queryByTestId('attachment-warning')).toBeNull();
    release();
    await settled(1);
    expect(sendButton().disabled).toBe(false);
    await type('');
    expect(sendButton().disabled).toBe(false);
  });

  it('a model that cannot see images: the composer warns, the send button says why, and removing the image sends', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const sendSpy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);
    // A model the server lists whose capabilities say it cannot see images.
    await waitFor(() => expect(app.modelSpecs.openai).toBeDefined());
    const [old] = await backend.describeModels('openai', ['gpt-3.5-turbo']);
    app.modelSpecs = { ...app.modelSpecs, openai: { ...app.modelSpecs.openai, 'gpt-3.5-turbo': old! } };
    app.choose({ provider: 'openai', model: 'gpt-3.5-turbo', typed: true });
    await type('Describe it');
    await paste([file(PNG, 'shot.png', 'image/png')]);
    await settled(1);
    const warning = await screen.findByTestId('attachment-warning');
    expect(warning.textContent?.trim()).toBe("gpt-3.5-turbo can't see images — remove them or pick another model");
    expect(sendButton().disabled).toBe(true);
    expect(sendButton().title).toBe("Cannot send: gpt-3.5-turbo can't see images — remove them or pick another model");
    await fireEvent.keyDown(input(), { key: 'Enter' });
    expect(sendSpy).not.toHaveBeenCalled();
    expect(input().value).toBe('Describe it');

    // Another model: the warning goes.
    app.choose({ provider: 'openai', model: 'gpt-4o' });
    await waitFor(() => expect(screen.queryByTestId('attachment-warning')).toBeNull());
    app.choose({ provider: 'openai', model: 'gpt-3.5-turbo', typed: true });
    await screen.findByTestId('attachment-warning');
    // Or the image removed.
    await fireEvent.click(within(items()[0]!).getByTestId('attachment-remove'));
    expect(screen.queryByTestId('attachment-warning')).toBeNull();
    expect(sendButton().disabled).toBe(false);
  });

  it('the service refuses images for such a model before storing anything (the fake as the service)', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const id = await backend.uploadBegin('a.png', PNG.length);
    await backend.uploadChunk(id, btoa(String.fromCharCode(...PNG)));
    const a = await backend.uploadFinish(id);
    const request: SendRequest = { conversationId: null, text: 'hi', provider: 'openai', model: 'gpt-3.5-turbo', forced: [], useTools: true, dryRun: false, disableForChat: [], attachments: [a.id] };
    await expect(backend.sendMessage(request, { onEvent: () => {} })).rejects.toMatchObject({ kind: 'badRequest', message: "gpt-3.5-turbo can't see images — remove them or pick another model" });
    expect(await backend.listConversations()).toEqual([]);
  });

  it('the paperclip asks the native picker: what it attached is shown, and what it refused says why', async () => {
    await start();
    await fireEvent.click(screen.getByTestId('attach-button'));
    await settled(3);
    expect(items().map((i) => [i.dataset.name, i.dataset.status])).toEqual([
      ['diagram.png', 'ready'],
      ['notes.md', 'ready'],
      ['archive.zip', 'error'],
    ]);
    expect(within(items()[2]!).getByTestId('attachment-error').textContent).toBe("archive.zip is an unknown binary file, which can't be sent to a model: attach an image (PNG, JPEG, GIF, WebP), a PDF or a text file.");
  });

  it('a click opens the preview: an image full size, a text file as code, a PDF as its text', async () => {
    await start();
    await drop([file(PNG, 'photo.png', 'image/png'), file('fn main() {}\n', 'main.rs', 'text/plain'), file(PDF, 'report.pdf', 'application/pdf')]);
    await settled(3);
    const open = async (n: number) => {
      await fireEvent.click(within(items()[n]!).getByRole('button', { name: /Open the preview/ }));
      return screen.findByTestId('attachment-preview');
    };
    let dialog = await open(0);
    expect((await within(dialog).findByTestId('attachment-preview-image')).getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    await fireEvent.click(within(dialog).getByTestId('attachment-preview-close'));
    dialog = await open(1);
    expect((await within(dialog).findByTestId('attachment-preview-text')).textContent).toBe('fn main() {}\n');
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('attachment-preview')).toBeNull());
    dialog = await open(2);
    expect((await within(dialog).findByTestId('attachment-preview-text')).textContent).toBe('Quarterly report: revenue up 12%');
    expect(dialog.textContent).toContain('1 page');
  });
});

describe('a PDF whose text was cut', () => {
  /** Three pages, each its own text. */
  const LONG_PDF = new TextEncoder().encode(
    '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >> endobj\n' +
      '3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n4 0 obj << /Type /Page /Parent 2 0 R >> endobj\n5 0 obj << /Type /Page /Parent 2 0 R >> endobj\n' +
      '6 0 obj << /Length 99 >> stream\nBT (Alpha page text) Tj ET BT (Beta page text) Tj ET BT (Gamma page text) Tj ET\nendstream endobj\n' +
      'trailer << /Root 1 0 R >>\n%%EOF\n',
  );

  it('says so on its chip, in the chip\'s title and in the preview', async () => {
    const max = FAKE_PDF_TEXT.max;
    FAKE_PDF_TEXT.max = 20;
    try {
      await start();
      await drop([file(LONG_PDF, 'long.pdf', 'application/pdf')]);
      await settled(1);
      const chip = items()[0]!;
      expect(within(chip).getByTestId('attachment-meta').textContent).toMatch(/^PDF · 3 pages · text cut · \d+ bytes$/);
      const button = within(chip).getByRole('button', { name: /Open the preview/ });
      expect(button.getAttribute('title')).toMatch(/^long\.pdf\nPDF · 3 pages · text cut · \d+ bytes\n/);
      expect(button.getAttribute('title')).toContain('\nText of pages 1–2 of 3 only (page 2 cut short): extraction stopped at the size limit (20 bytes).');
      expect(button.getAttribute('aria-label')).toContain('Text of pages 1–2 of 3 only');
      await fireEvent.click(button);
      const dialog = await screen.findByTestId('attachment-preview');
      expect((await within(dialog).findByTestId('attachment-preview-cut')).textContent).toContain('Text of pages 1–2 of 3 only (page 2 cut short)');
      expect(within(dialog).getByTestId('attachment-preview-text').textContent).toBe('Alpha page text\nBeta');
    } finally {
      FAKE_PDF_TEXT.max = max;
    }
  });

  it('a PDF read whole says nothing of the kind', async () => {
    await start();
    await drop([file(LONG_PDF, 'long.pdf', 'application/pdf')]);
    await settled(1);
    expect(within(items()[0]!).getByTestId('attachment-meta').textContent).not.toContain('text cut');
    await fireEvent.click(within(items()[0]!).getByRole('button', { name: /Open the preview/ }));
    const dialog = await screen.findByTestId('attachment-preview');
    await within(dialog).findByTestId('attachment-preview-text');
    expect(within(dialog).queryByTestId('attachment-preview-cut')).toBeNull();
  });
});

describe('attachments in sent messages', () => {
  it('thumbnails are read once per attachment, however many messages show it', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const thumb = vi.spyOn(backend, 'attachmentThumbnail');
    const preview = vi.spyOn(backend, 'attachmentPreview');
    const { app } = await start(backend);
    // Its own bytes (the cache is by id and outlives a test).
    const own = new Uint8Array([...PNG, 0x0a]);
    const up = await backend.uploadBegin('same.png', own.length);
    await backend.uploadChunk(up, btoa(String.fromCharCode(...own)));
    const a = await backend.uploadFinish(up);
    app.attachments.addAttached(a);
    await type('first');
    await fireEvent.click(sendButton());
    await waitFor(() => expect(app.current.running).toBe(false));
    app.attachments.addAttached(a);
    await type('second');
    await fireEvent.click(sendButton());
    await waitFor(() => expect(app.current.running).toBe(false));
    const thumbs = () => screen.getAllByTestId('message-attachments').flatMap((l) => within(l).getAllByTestId('attachment-thumb'));
    await waitFor(() => expect(thumbs().map((t) => t.dataset.loaded)).toEqual(['true', 'true']));
    expect(thumb.mock.calls.filter(([id]) => id === a.id)).toHaveLength(1);
    // The full image is read only for the preview.
    expect(preview).not.toHaveBeenCalled();
  });

  it('a stored message shows its files as chips with their type, size and pages', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const { app } = await start(backend);
    const up = await backend.uploadBegin('report.pdf', PDF.length);
    await backend.uploadChunk(up, btoa(String.fromCharCode(...PDF)));
    const a = await backend.uploadFinish(up);
    app.attachments.addAttached(a);
    await fireEvent.click(sendButton());
    await waitFor(() => expect(app.current.running).toBe(false));
    const id = app.current.conversationId!;
    app.newChat();
    await app.open(id);
    const user = await waitFor(() => screen.getAllByTestId('message').find((m) => m.dataset.role === 'user')!);
    // Files alone: no empty text bubble.
    expect(within(user).queryByTestId('message-text')).toBeNull();
    expect(within(user).getByTestId('attachment-meta').textContent).toMatch(/^PDF · 1 page · \d+ bytes$/);
  });
});

describe('editing a question with attachments', () => {
  it('the editor shows its files, and the new version keeps them', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const edit = vi.spyOn(backend, 'editMessage');
    const { app } = await start(backend);
    await type('Summarise');
    await drop([file(PDF, 'report.pdf', 'application/pdf')]);
    await settled(1);
    await fireEvent.click(sendButton());
    await waitFor(() => expect(app.current.running).toBe(false));
    const user = () => screen.getAllByTestId('message').find((m) => m.dataset.role === 'user')!;
    await fireEvent.click(within(user()).getByTestId('edit-message'));
    expect(within(await screen.findByTestId('edit-attachments')).getAllByTestId('attachment').map((a) => a.dataset.name)).toEqual(['report.pdf']);
    const box = screen.getByTestId('edit-input') as HTMLTextAreaElement;
    box.value = 'Summarise in one line';
    await fireEvent.input(box);
    await fireEvent.click(screen.getByTestId('edit-save'));
    await waitFor(() => expect(edit).toHaveBeenCalledTimes(1));
    await waitFor(() => expect(app.current.running).toBe(false));
    expect(within(user()).getAllByTestId('attachment').map((a) => a.dataset.name)).toEqual(['report.pdf']);
    // Stored with the new version too.
    const id = app.current.conversationId!;
    app.newChat();
    await app.open(id);
    await waitFor(() => expect(within(user()).getAllByTestId('attachment').map((a) => a.dataset.name)).toEqual(['report.pdf']));
    expect(within(user()).getByTestId('message-text').textContent).toBe('Summarise in one line');
  });
});

describe('search hits in attached files', () => {
  it('say which file matched', async () => {
    const { hitPlace } = await import('../src/lib/search/groups');
    const hit = { conversationId: 'c', title: 't', messageId: 'm', role: 'user', kind: 'attachment', snippet: 'revenue', attachment: 'report.pdf' } as unknown as Parameters<typeof hitPlace>[0];
    expect(hitPlace(hit)).toBe('attached file report.pdf');
  });
});

describe('sizes and upload buffers', () => {
  it('names sizes as the engine does (1024-based), so a chip and a refusal agree', () => {
    expect(formatSize(812)).toBe('812 bytes');
    expect(formatSize(1023)).toBe('1023 bytes');
    expect(formatSize(1536)).toBe('1.5 KB');
    // The desktop bench's PDF: the engine says 20.4 MB, a 1000-based count would say 21.4.
    expect(formatSize(21_428_355)).toBe('20.4 MB');
    expect(formatSize(50 * 1024 * 1024)).toBe('50.0 MB');
    expect(formatSize(3 * 1024 ** 3)).toBe('3.0 GB');
  });

  it("releases a slice's bytes once sent: transfer(0) where the engine has it, nothing where it has not", () => {
    const transfer = vi.fn((length: number) => new ArrayBuffer(length));
    const buffer = Object.assign(new ArrayBuffer(16), { transfer });
    releaseBytes(buffer);
    expect(transfer).toHaveBeenCalledExactlyOnceWith(0);
    expect(transfer.mock.contexts[0]).toBe(buffer);
    // Already detached: the engine throws, and nothing is left to free.
    const detached = Object.assign(new ArrayBuffer(16), {
      transfer: () => {
        throw new TypeError('detached');
      },
    });
    expect(() => releaseBytes(detached)).not.toThrow();
    // A real buffer: detached (0 bytes) where the runtime has transfer, kept where it has not.
    const plain = new ArrayBuffer(16);
    const detaches = 'transfer' in plain;
    releaseBytes(plain);
    expect(plain.byteLength).toBe(detaches ? 0 : 16);
  });
});
