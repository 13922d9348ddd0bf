/**
 * OpenAPI documents in the fake: every source reads as one canned Petstore document. Like the
 * shell, it never reads a path from the page: a file is one "chosen" in the (fake) native dialog,
 * named afterwards by its pick.
 */
import type { DefinedToolInfo, OpenApiOperation, OpenApiPreview, OpenApiWindowPreview, OpenApiWindowRequest, PickedFile } from '../bindings';
import { fakeOnlyError, ipcError } from './errors';
import { isHttpUrl } from './util';

/** The canned document every source reads as: 40 operations, more than the 30 selected by default. */
const PETSTORE_TITLE = 'Swagger Petstore';
const PETSTORE_SERVERS = ['https://petstore.example.com/v2', 'https://staging.petstore.example.com/v2'];
const PETSTORE_OPERATIONS: Omit<OpenApiOperation, 'selected' | 'leftOut'>[] = ['pet', 'store', 'user', 'order', 'tag', 'category', 'vet', 'visit'].flatMap((r) => {
  const R = r[0]?.toUpperCase() + r.slice(1);
  const id = `/${r}s/{${r}Id}`;
  return [
    { tool: `list${R}s`, route: `GET /${r}s`, summary: `List ${r}s` },
    { tool: `get${R}`, route: `GET ${id}`, summary: `Find a ${r} by id` },
    { tool: `create${R}`, route: `POST /${r}s`, summary: `Add a ${r}` },
    { tool: `update${R}`, route: `PUT ${id}`, summary: `Update a ${r}` },
    { tool: `delete${R}`, route: `DELETE ${id}`, summary: `Delete a ${r}` },
  ];
});
/** Above this many operations none is selected to start with (the service's `DEFAULT_SELECTED_MAX`). */
const OPENAPI_SELECTED_MAX = 30;
const OPENAPI_NOTES = [
  "The security scheme 'petstore_auth' (OAuth 2) is not supported: operations that need only it would not get a key.",
  'POST /pets/{petId}/uploadImage sends multipart/form-data, which is not supported; it was left out.',
];

/** The key store entry the service names for a scheme (`secret_name`). */
function openApiKeyName(document: string, scheme: string): string {
  const s = `${document || PETSTORE_TITLE}-${scheme}`.trim().replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^-+|-+$/g, '');
  return (s || 'openapi').slice(0, 64);
}

/** The file the fake's native dialog "chooses". */
export const FAKE_PICKED_FILE = 'petstore.yaml';

/** The files chosen so far, by pick (`pick-1` is the first). */
export type FakePicks = string[];

/**
 * Like the shell's `choose_file` and the service's `PickedFiles::resolve`: a request whose source
 * is a file is answered by the (fake) native dialog; a URL must be http(s); a pick must be one made.
 */
export function resolveOpenApi(picks: FakePicks, request: OpenApiWindowRequest): { request: OpenApiWindowRequest; file: PickedFile | null } {
  const source = request.source;
  if (source.kind === 'chooseFile') {
    picks.push(FAKE_PICKED_FILE);
    const pick = `pick-${picks.length}`;
    return { request: { ...request, source: { kind: 'picked', pick } }, file: { pick, name: FAKE_PICKED_FILE } };
  }
  if (source.kind === 'url') {
    if (!isHttpUrl(source.url.trim())) throw ipcError('openApiNotUrl', { url: source.url.trim() });
    return { request, file: null };
  }
  const name = /^pick-[1-9][0-9]*$/.test(source.pick) ? picks[Number(source.pick.slice(5)) - 1] : undefined;
  if (name === undefined) throw ipcError('openApiPickUnknown', { pick: source.pick });
  return { request, file: { pick: source.pick, name } };
}

/** What the shell answers when the person closes the native file dialog without choosing. */
export function noFileChosen() {
  return fakeOnlyError('cancelled', 'No file was chosen.');
}

/** Like the service's preview for the window: the canned document, from a picked file or an http(s) URL. */
export function openApiWindowPreview(picks: FakePicks, request: OpenApiWindowRequest): OpenApiWindowPreview {
  const resolved = resolveOpenApi(picks, request);
  return { preview: openApiPreview(resolved.request), file: resolved.file };
}

/** The canned document, for a request whose source is resolved. */
export function openApiPreview(request: OpenApiWindowRequest): OpenApiPreview {
  const include = request.include ? new Set(request.include) : null;
  const all = PETSTORE_OPERATIONS.length <= OPENAPI_SELECTED_MAX;
  return {
    title: PETSTORE_TITLE,
    servers: [...PETSTORE_SERVERS],
    schemes: [
      { name: 'api_key', kind: "API key in the header 'api_key'", supported: true, key: request.keys.api_key ?? openApiKeyName(request.name, 'api_key') },
      { name: 'petstore_auth', kind: 'OAuth 2 (not supported)', supported: false, key: null },
    ],
    operations: PETSTORE_OPERATIONS.map((o) => ({ ...o, selected: include ? include.has(o.tool) : all, leftOut: null })),
    notes: [...OPENAPI_NOTES],
  };
}

/** An imported document: the request it was imported with, and whether its keys were allowed. */
export interface FakeOpenApi {
  request: OpenApiWindowRequest;
  /** Where it was read from, as the listing shows it. */
  source: string;
  allowed: boolean;
}

export function openApiInfo(d: FakeOpenApi): DefinedToolInfo {
  const preview = openApiPreview(d.request);
  const offered = preview.operations.filter((o) => o.selected);
  const server = d.request.server ?? PETSTORE_SERVERS[0] ?? '';
  const origin = isHttpUrl(server) ? new URL(server).origin : server;
  const keys = offered.length > 0 ? [preview.schemes[0]?.key ?? ''] : [];
  const description = `${preview.title}: ${offered.length} of ${preview.operations.length} operations offered (${preview.notes.length} notes)`;
  const state: DefinedToolInfo['state'] =
    keys.length > 0 && !d.allowed ? { state: 'needsApproval', reason: `Let the tools of the OpenAPI document '${d.request.name}' send your key '${keys[0]}' to ${origin}?` } : { state: 'ready' };
  return { name: d.request.name, kind: 'openApi', description, target: `${origin} (${d.source})`, keys, asksFirst: offered.some((o) => !o.route.startsWith('GET ')), state };
}
