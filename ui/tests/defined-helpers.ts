/**
 * What the "Your tools" tests share: the app over the in-memory fake backend (patched where a test
 * says), Settings opened at the section, a field typed into, a tool's row.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

export async function start(patch: Partial<Backend> = {}) {
  const base = createFakeBackend({ tickMs: 0, empty: true });
  const backend: Backend = { ...base, ...patch };
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return { app, backend };
}

export async function openSection(): Promise<HTMLElement> {
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-defined'));
  return screen.findByTestId('settings-section-defined');
}

export async function row(name: string): Promise<HTMLElement> {
  return waitFor(() => {
    const r = screen.getAllByTestId('defined-tool').find((x) => x.dataset.name === name);
    if (!r) throw new Error(`no row for ${name}`);
    return r;
  });
}

export async function setValue(el: HTMLElement, value: string) {
  (el as HTMLInputElement).value = value;
  await fireEvent.input(el);
  await fireEvent.change(el);
}
