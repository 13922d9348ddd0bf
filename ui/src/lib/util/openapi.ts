/**
 * Importing an OpenAPI document in "Your tools": what a person picks from a preview (server, keys,
 * operations), turned into the `OpenApiWindowRequest` the shell imports. The document itself is read and
 * converted by the service; nothing about it is decided here. A local document is never named by a
 * path: the shell's native dialog chooses it, and the page only holds the pick it hands back.
 */
import type { OpenApiOperation, OpenApiPreview, OpenApiSource, OpenApiWindowRequest, PickedFile } from '../ipc/bindings';

/** The server select's value for "another address, typed in". */
export const OTHER_SERVER = '\u0000other';

/** What the person typed and picked. */
export interface OpenApiForm {
  name: string;
  /** The http(s) URL typed in (ignored once a file is chosen). */
  source: string;
  /** The file chosen in the shell's native dialog, by its pick and name. */
  file: PickedFile | null;
  allowLocal: boolean;
  /** One of the document's servers, or `OTHER_SERVER`. */
  server: string;
  otherServer: string;
  /** Security scheme -> key name, for the supported schemes. */
  keys: Record<string, string>;
}

export function emptyOpenApiForm(): OpenApiForm {
  return { name: '', source: '', file: null, allowLocal: false, server: OTHER_SERVER, otherServer: '', keys: {} };
}

/** The picks a preview starts with: its first server, the key it names for each supported scheme, its selection. */
export function startPicking(f: OpenApiForm, preview: OpenApiPreview): Set<string> {
  f.server = preview.servers[0] ?? OTHER_SERVER;
  f.otherServer = '';
  f.keys = Object.fromEntries(preview.schemes.filter((s) => s.supported).map((s) => [s.name, s.key ?? '']));
  return new Set(preview.operations.filter((o) => o.selected).map((o) => o.tool));
}

/** The operations a search shows: each word in its tool name, route or summary (any case). */
export function matchingOperations(operations: OpenApiOperation[], query: string): OpenApiOperation[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return operations;
  return operations.filter((o) => {
    const text = `${o.tool} ${o.route} ${o.summary}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** Where the document comes from: the chosen file's pick, or the URL typed in. */
function documentSource(f: OpenApiForm): OpenApiSource {
  return f.file ? { kind: 'picked', pick: f.file.pick } : { kind: 'url', url: f.source.trim() };
}

/** The request a preview is read with: nothing picked yet. */
export function previewRequest(f: OpenApiForm): OpenApiWindowRequest {
  return { name: f.name.trim(), source: documentSource(f), server: null, keys: {}, include: null, allowLocalAddresses: f.allowLocal };
}

/** The request that has the shell ask the person for a file in its native dialog, then read it. */
export function chooseFileRequest(f: OpenApiForm): OpenApiWindowRequest {
  return { ...previewRequest(f), source: { kind: 'chooseFile' } };
}

/**
 * The import the picks describe: the checked operations in the document's order, a server only
 * when it is not the document's default, and a key name for each supported scheme that has one.
 */
export function importRequest(f: OpenApiForm, preview: OpenApiPreview, selected: ReadonlySet<string>): OpenApiWindowRequest {
  const server = f.server === OTHER_SERVER ? f.otherServer.trim() || null : f.server === preview.servers[0] ? null : f.server;
  const keys = Object.fromEntries(
    Object.entries(f.keys)
      .map(([scheme, key]) => [scheme, key.trim()] as const)
      .filter(([, key]) => key !== ''),
  );
  const include = preview.operations.filter((o) => selected.has(o.tool)).map((o) => o.tool);
  return { ...previewRequest(f), server, keys, include };
}
