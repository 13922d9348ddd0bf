/**
 * "Your tools" in Settings: importing an OpenAPI document (read, pick, import) and an HTTP tool's
 * own JSON Schema, against the in-memory fake backend: what a person sees and what the shell receives.
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { HttpToolConfig, OpenApiPreview } from '../src/lib/ipc/bindings';
import { buildHttpConfig, emptyHttpForm, httpFormOf } from '../src/lib/util/defined';
import { importRequest, matchingOperations, OTHER_SERVER } from '../src/lib/util/openapi';
import { openSection, row, setValue, start } from './defined-helpers';

/** Opens the import form, names the API, points it at a document and reads it. */
async function readDocument(name = 'petstore', source = 'https://petstore.example.com/openapi.json'): Promise<HTMLElement> {
  await openSection();
  await fireEvent.click(screen.getByTestId('defined-import-openapi'));
  const form = screen.getByTestId('openapi-form');
  await setValue(within(form).getByTestId('openapi-name'), name);
  await setValue(within(form).getByTestId('openapi-source'), source);
  await fireEvent.submit(within(form).getByTestId('openapi-read-form'));
  return form;
}

function shownTools(form: HTMLElement): string[] {
  return within(form)
    .queryAllByTestId('openapi-operation')
    .map((o) => o.dataset.tool ?? '');
}

function checkbox(form: HTMLElement, tool: string): HTMLInputElement {
  const op = within(form)
    .getAllByTestId('openapi-operation')
    .find((o) => o.dataset.tool === tool);
  if (!op) throw new Error(`no operation ${tool}`);
  return within(op).getByRole('checkbox') as HTMLInputElement;
}

beforeEach(() => {
  localStorage.clear();
});

describe('Import OpenAPI', () => {
  it('reads a document and shows its title, servers, schemes, operations and notes', async () => {
    const { backend } = await start();
    const preview = vi.spyOn(backend, 'previewOpenapi');
    const form = await readDocument();
    const picker = await within(form).findByTestId('openapi-picker');
    expect(preview).toHaveBeenCalledWith({ name: 'petstore', source: { kind: 'url', url: 'https://petstore.example.com/openapi.json' }, server: null, keys: {}, include: null, allowLocalAddresses: false });

    expect(within(picker).getByTestId('openapi-title').textContent).toBe('Swagger Petstore');
    const server = within(picker).getByTestId('openapi-server') as HTMLSelectElement;
    expect([...server.options].map((o) => o.textContent)).toEqual(['https://petstore.example.com/v2', 'https://staging.petstore.example.com/v2', 'Other…']);
    expect(server.value).toBe('https://petstore.example.com/v2');
    // The supported scheme gets a key name (prefilled), the unsupported one is only listed.
    expect((within(picker).getByTestId('openapi-key-api_key') as HTMLInputElement).value).toBe('petstore-api_key');
    expect(within(picker).getByTestId('openapi-scheme-unsupported').textContent).toContain('OAuth 2 (not supported)');
    expect(within(picker).getByLabelText(/api_key/)).toBe(within(picker).getByTestId('openapi-key-api_key'));

    // 40 operations: a large document starts with nothing selected, and says so.
    expect(shownTools(picker)).toHaveLength(40);
    expect(within(picker).getByTestId('openapi-count').textContent).toBe('0 of 40 selected');
    expect(within(picker).getByTestId('openapi-large-note')).toBeTruthy();
    expect(checkbox(picker, 'listPets').checked).toBe(false);

    const notes = within(picker).getByTestId('openapi-notes');
    expect(notes.querySelector('summary')?.textContent).toBe('What is left out (2)');
    expect(notes.textContent).toContain('OAuth 2');
  });

  it('search filters by tool name, route or summary; “Select all shown” and “Clear” act on what is shown', async () => {
    await start();
    const form = await readDocument();
    await within(form).findByTestId('openapi-picker');
    const search = within(form).getByTestId('openapi-search');

    await setValue(search, 'pet');
    expect(shownTools(form)).toEqual(['listPets', 'getPet', 'createPet', 'updatePet', 'deletePet']);
    await setValue(search, 'DELETE /users');
    expect(shownTools(form)).toEqual(['deleteUser']);
    await setValue(search, 'find a vet');
    expect(shownTools(form)).toEqual(['getVet']);
    await setValue(search, 'nothing like it');
    expect(shownTools(form)).toEqual([]);
    expect(form.textContent).toContain('No operation matches');

    await setValue(search, 'pet');
    await fireEvent.click(within(form).getByTestId('openapi-select-shown'));
    expect(within(form).getByTestId('openapi-count').textContent).toBe('5 of 40 selected, 5 shown');
    await setValue(search, 'GET');
    await fireEvent.click(within(form).getByTestId('openapi-select-shown'));
    // listPets and getPet were already in: 5 + 14 more GETs.
    expect(within(form).getByTestId('openapi-count').textContent).toBe('19 of 40 selected, 16 shown');
    expect(within(form).getByTestId('openapi-clear').textContent).toBe('Clear shown');
    await fireEvent.click(within(form).getByTestId('openapi-clear'));
    expect(within(form).getByTestId('openapi-count').textContent).toBe('3 of 40 selected, 16 shown');

    await setValue(search, '');
    expect(shownTools(form)).toHaveLength(40);
    expect(['createPet', 'updatePet', 'deletePet'].every((t) => checkbox(form, t).checked)).toBe(true);
    expect(within(form).getByTestId('openapi-clear').textContent).toBe('Clear');
    await fireEvent.click(within(form).getByTestId('openapi-clear'));
    expect(within(form).getByTestId('openapi-count').textContent).toBe('0 of 40 selected');
  });

  it('imports exactly what was picked: the checked operations, the server when changed, the keys', async () => {
    const { backend } = await start();
    const imp = vi.spyOn(backend, 'importOpenapi');
    const form = await readDocument('pets');
    await within(form).findByTestId('openapi-picker');
    await fireEvent.click(checkbox(form, 'getPet'));
    await fireEvent.click(checkbox(form, 'listPets'));
    await setValue(within(form).getByTestId('openapi-server'), OTHER_SERVER);
    await setValue(within(form).getByTestId('openapi-server-other'), ' https://pets.internal/v2 ');
    await setValue(within(form).getByTestId('openapi-key-api_key'), 'petstore_key');
    await fireEvent.click(within(form).getByTestId('openapi-allow-local'));
    expect(within(form).getByTestId('openapi-import').textContent).toContain('Import 2 operations');
    await fireEvent.click(within(form).getByTestId('openapi-import'));

    await waitFor(() => expect(imp).toHaveBeenCalledTimes(1));
    expect(imp.mock.calls[0]?.[0]).toEqual({
      name: 'pets',
      source: { kind: 'url', url: 'https://petstore.example.com/openapi.json' },
      server: 'https://pets.internal/v2',
      keys: { api_key: 'petstore_key' },
      include: ['listPets', 'getPet'],
      allowLocalAddresses: true,
    });
    // The form closes; the document is listed, waiting for the key's approval.
    await waitFor(() => expect(screen.queryByTestId('openapi-form')).toBeNull());
    const pets = await row('pets');
    expect(within(pets).getByTestId('defined-kind').textContent).toBe('OpenAPI');
    expect(pets.dataset.state).toBe('needsApproval');
    expect(within(pets).getByTestId('defined-keys').textContent).toContain('petstore_key');
    expect(screen.getByTestId('defined-note').textContent).toContain('waits for your approval');
  });

  it('sends no server when the document’s first one stays chosen, and a later one when picked', async () => {
    const { backend } = await start();
    const imp = vi.spyOn(backend, 'importOpenapi').mockRejectedValueOnce({ kind: 'config', message: "The document has no operation named 'x'.", retryable: false });
    const form = await readDocument();
    await within(form).findByTestId('openapi-picker');
    await fireEvent.click(checkbox(form, 'listPets'));
    await fireEvent.click(within(form).getByTestId('openapi-import'));
    await waitFor(() => expect(imp).toHaveBeenCalledTimes(1));
    expect(imp.mock.calls[0]?.[0]).toMatchObject({ server: null, keys: { api_key: 'petstore-api_key' }, include: ['listPets'] });
    // The service's refusal shows inline; the picker stays.
    expect((await within(form).findByTestId('openapi-import-error')).textContent).toContain("no operation named 'x'");

    await setValue(within(form).getByTestId('openapi-server'), 'https://staging.petstore.example.com/v2');
    await fireEvent.click(within(form).getByTestId('openapi-import'));
    await waitFor(() => expect(imp).toHaveBeenCalledTimes(2));
    expect(imp.mock.calls[1]?.[0]).toMatchObject({ server: 'https://staging.petstore.example.com/v2' });
  });

  it('nothing checked is said before anything is sent', async () => {
    const { backend } = await start();
    const imp = vi.spyOn(backend, 'importOpenapi');
    const form = await readDocument();
    await within(form).findByTestId('openapi-picker');
    await fireEvent.click(within(form).getByTestId('openapi-import'));
    expect((await within(form).findByTestId('openapi-import-error')).textContent).toContain('at least one operation');
    expect(imp).not.toHaveBeenCalled();
  });

  it('a document that cannot be read shows why, inline, and no picker', async () => {
    await start({ previewOpenapi: () => Promise.reject({ kind: 'config', message: 'The document is not OpenAPI 3 or Swagger 2.', retryable: false }) });
    const form = await readDocument('x', 'https://example.com/notes.json');
    const error = await within(form).findByTestId('openapi-read-error');
    expect(error.textContent).toContain('not OpenAPI 3 or Swagger 2');
    expect(error.getAttribute('role')).toBe('alert');
    expect(within(form).getByTestId('openapi-source').getAttribute('aria-invalid')).toBe('true');
    expect(within(form).queryByTestId('openapi-picker')).toBeNull();

    // An empty source is said before anything is asked.
    await setValue(within(form).getByTestId('openapi-source'), '');
    await fireEvent.submit(within(form).getByTestId('openapi-read-form'));
    expect(within(form).getByTestId('openapi-read-error').textContent).toContain('http(s) URL of an OpenAPI document');
  });

  it('Escape closes the form', async () => {
    await start();
    await openSection();
    await fireEvent.click(screen.getByTestId('defined-import-openapi'));
    await fireEvent.keyDown(screen.getByTestId('openapi-source'), { key: 'Escape' });
    expect(screen.queryByTestId('openapi-form')).toBeNull();
    expect(screen.getByTestId('settings')).toBeTruthy();
  });
});

describe('an HTTP tool’s JSON Schema', () => {
  it('refuses parameters that are not JSON, inline, and sends valid ones as `parameters`', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addHttpTool');
    await openSection();
    await fireEvent.click(screen.getByTestId('defined-add-http'));
    const form = screen.getByTestId('http-form');
    await setValue(within(form).getByTestId('http-name'), 'weather2');
    await setValue(within(form).getByTestId('http-description'), 'Weather');
    await setValue(within(form).getByTestId('http-url'), 'https://api.example.com/v1/{{city}}');
    const params = within(form).getByTestId('http-parameters');
    await setValue(params, '{"type": "object",');
    await fireEvent.submit(form);
    expect(add).not.toHaveBeenCalled();
    expect(params.getAttribute('aria-invalid')).toBe('true');
    expect((within(form).getByTestId('http-parameters-toggle') as HTMLDetailsElement).open).toBe(true);
    expect(form.textContent).toContain('The parameters are not valid JSON');

    const schema = { type: 'object', properties: { city: { type: 'string', description: 'A city name' } }, required: ['city'] };
    await setValue(params, JSON.stringify(schema));
    await fireEvent.submit(form);
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(add.mock.calls[0]?.[0]).toMatchObject({ name: 'weather2', parameters: schema } satisfies Partial<HttpToolConfig>);
  });

  it('is prefilled when editing, and empty means generated from the placeholders', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    const config: HttpToolConfig = { name: 's', description: 'Search', method: 'GET', url: 'https://x.example/{{q}}', parameters: schema };
    const f = httpFormOf(config);
    expect(JSON.parse(f.parameters)).toEqual(schema);
    const same = buildHttpConfig(f, config);
    expect('config' in same && same.config.parameters).toEqual(schema);
    const cleared = buildHttpConfig({ ...f, parameters: '  ' }, config);
    expect('config' in cleared && cleared.config.parameters).toBeNull();
    expect(httpFormOf({ ...config, parameters: null }).parameters).toBe('');
    const notObject = buildHttpConfig({ ...emptyHttpForm(), name: 'x', description: 'y', url: 'https://x', parameters: '[1]' });
    expect('errors' in notObject && notObject.errors.parameters).toContain('must be a JSON object');
  });
});

describe('the import’s helpers', () => {
  const preview: OpenApiPreview = {
    title: 'T',
    servers: ['https://a.example', 'https://b.example'],
    schemes: [],
    operations: [
      { tool: 'one', route: 'GET /one', summary: 'First', selected: true, leftOut: null },
      { tool: 'two', route: 'POST /two', summary: 'Second thing', selected: false, leftOut: null },
    ],
    notes: [],
  };

  it('matches every word in any case', () => {
    expect(matchingOperations(preview.operations, '  second  THING ').map((o) => o.tool)).toEqual(['two']);
    expect(matchingOperations(preview.operations, '').map((o) => o.tool)).toEqual(['one', 'two']);
  });

  it('keeps the document’s order and leaves out blank keys and an empty other server', () => {
    const f = { name: ' n ', source: ' s ', file: null, allowLocal: false, server: OTHER_SERVER, otherServer: ' ', keys: { a: ' ', b: ' k ' } };
    expect(importRequest(f, preview, new Set(['two', 'one']))).toEqual({ name: 'n', source: { kind: 'url', url: 's' }, server: null, keys: { b: 'k' }, include: ['one', 'two'], allowLocalAddresses: false });
    // A chosen file is named by its pick, never by a path.
    expect(importRequest({ ...f, file: { pick: 'pick-2', name: 'api.yaml' } }, preview, new Set(['one'])).source).toEqual({ kind: 'picked', pick: 'pick-2' });
  });
});
