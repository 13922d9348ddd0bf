/** OpenAPI documents in the fake: every source reads as one canned Petstore document. */
import type { DefinedToolInfo, OpenApiOperation, OpenApiPreview, OpenApiRequest } from '../bindings';
import { ipcError } from './errors';
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

/** Why a file that is not there cannot be read (this system's words, as the service quotes them). */
const NO_SUCH_FILE = 'No such file or directory (os error 2)';

/** Like the service's preview: the canned document, read from any absolute path or http(s) URL. */
export function openApiPreview(request: OpenApiRequest): OpenApiPreview {
  const source = request.source.trim();
  // The service reads anything else as a file path; a file the fake has not got is one it cannot read.
  if ((!isHttpUrl(source) && !source.startsWith('/')) || source.includes('missing')) throw ipcError('openApiUnreadable', { source, reason: NO_SUCH_FILE });
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
  request: OpenApiRequest;
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
  return { name: d.request.name, kind: 'openApi', description, target: `${origin} (${d.request.source})`, keys, asksFirst: offered.some((o) => !o.route.startsWith('GET ')), state };
}
