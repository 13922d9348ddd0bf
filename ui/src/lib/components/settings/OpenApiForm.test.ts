/**
 * Importing an OpenAPI document, against the in-memory fake backend: a file on this computer is
 * chosen in the shell's native dialog and named afterwards by its pick; the page never sends a path.
 */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from '../../../App.svelte';
import type { Backend } from '../../ipc/backend';
import type { OpenApiWindowRequest } from '../../ipc/bindings';
import { createFakeBackend } from '../../ipc/fake';
import { errorText } from '../../ipc/fake/errors';
import { FAKE_PICKED_FILE, noFileChosen } from '../../ipc/fake/openapi';
import { AppState } from '../../state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

/** The app over the fake, every OpenAPI request the shell receives kept in `sent`. */
async function start(cancelDialog = false) {
  const base = createFakeBackend({ tickMs: 0, empty: true });
  const sent: OpenApiWindowRequest[] = [];
  const backend: Backend = {
    ...base,
    previewOpenapi: async (request) => {
      sent.push(structuredClone(request));
      if (cancelDialog && request.source.kind === 'chooseFile') throw noFileChosen();
      return base.previewOpenapi(request);
    },
    importOpenapi: async (request) => {
      sent.push(structuredClone(request));
      return base.importOpenapi(request);
    },
  };
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-defined'));
  await fireEvent.click(await screen.findByTestId('defined-import-openapi'));
  return { sent, form: await screen.findByTestId('openapi-form') };
}

async function setValue(el: HTMLElement, value: string) {
  (el as HTMLInputElement).value = value;
  await fireEvent.input(el);
}

describe('OpenAPI import form', () => {
  afterEach(cleanup);

  it('chooses a local document in the native dialog and imports it by its pick, never by a path', async () => {
    const { sent, form } = await start();
    await setValue(within(form).getByTestId('openapi-name'), 'petstore');
    await fireEvent.click(within(form).getByTestId('openapi-choose-file'));

    await within(form).findByTestId('openapi-picker');
    expect(within(form).getByTestId('openapi-file').textContent).toContain(FAKE_PICKED_FILE);
    expect(sent[0]?.source).toEqual({ kind: 'chooseFile' });

    await fireEvent.click(within(form).getByTestId('openapi-read'));
    await waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]?.source).toEqual({ kind: 'picked', pick: 'pick-1' });

    // The canned document is large: nothing starts selected.
    await fireEvent.click(within(form).getByTestId('openapi-select-shown'));
    await fireEvent.click(within(form).getByTestId('openapi-import'));
    await waitFor(() => expect(sent).toHaveLength(3));
    expect(sent[2]?.source).toEqual({ kind: 'picked', pick: 'pick-1' });
    expect(sent[2]?.name).toBe('petstore');
    // Nothing the page sent names a place on this computer.
    expect(JSON.stringify(sent)).not.toMatch(/"\//);
  });

  it('reads a typed source only as a URL: a path is refused with the service’s words', async () => {
    const { sent, form } = await start();
    await setValue(within(form).getByTestId('openapi-source'), '/home/you/.ssh/config.json');
    await fireEvent.click(within(form).getByTestId('openapi-read'));
    const alert = await within(form).findByTestId('openapi-read-error');
    expect(alert.textContent).toContain(errorText('openApiNotUrl', { url: '/home/you/.ssh/config.json' }));
    expect(sent[0]?.source).toEqual({ kind: 'url', url: '/home/you/.ssh/config.json' });
    expect(within(form).queryByTestId('openapi-picker')).toBeNull();

    await setValue(within(form).getByTestId('openapi-source'), 'https://petstore.example.com/openapi.json');
    await fireEvent.click(within(form).getByTestId('openapi-read'));
    await within(form).findByTestId('openapi-picker');
    expect(sent[1]?.source).toEqual({ kind: 'url', url: 'https://petstore.example.com/openapi.json' });
  });

  it('leaves the form as it was when the person closes the file dialog without choosing', async () => {
    const { sent, form } = await start(true);
    await fireEvent.click(within(form).getByTestId('openapi-choose-file'));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(within(form).queryByTestId('openapi-read-error')).toBeNull();
    expect(within(form).queryByTestId('openapi-file')).toBeNull();
    expect(within(form).queryByTestId('openapi-picker')).toBeNull();
  });
});
