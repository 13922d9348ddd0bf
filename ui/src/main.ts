import './app.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { api, uploadBytes } from './lib/ipc/api';
import { AppState, isSettingsSection } from './lib/state/app.svelte';
import { PrefsState } from './lib/state/prefs.svelte';

/** Shown when the app cannot even start (never a blank window). */
function renderFatal(target: HTMLElement, error: unknown): void {
  const box = document.createElement('div');
  box.setAttribute('role', 'alert');
  box.style.cssText = 'max-width:520px;margin:15vh auto;padding:24px;font:15px/1.5 system-ui,sans-serif';
  const h = document.createElement('h1');
  h.style.fontSize = '20px';
  h.textContent = 'Switchboard could not start';
  const p = document.createElement('p');
  p.textContent = 'Reload the window to try again. If this keeps happening, the message below helps to report it.';
  const pre = document.createElement('pre');
  pre.style.whiteSpace = 'pre-wrap';
  pre.textContent = error instanceof Error ? error.message : String(error);
  box.append(h, p, pre);
  target.replaceChildren(box);
}

/**
 * Dev only: query parameters for screenshots and manual testing (?theme=dark|light, ?open=latest|N|id,
 * ?send=text, ?tray=1, ?sidebar=0, ?settings=providers|keys|web|tools|defined|mcp|limits|appearance|data). The fake backend
 * reads its own (?providers=0, ?keychain=problem|pending).
 */
async function devHooks(app: AppState): Promise<void> {
  const params = new URLSearchParams(location.search);
  const open = params.get('open');
  if (open === 'latest' || (open && /^\d+$/.test(open))) {
    const pick = app.conversations[open === 'latest' ? 0 : Number(open)];
    if (pick) await app.open(pick.id);
  } else if (open) {
    await app.open(open);
  }
  if (params.get('sidebar') === '0' && app.sidebarOpen) app.toggleSidebar();
  if (params.get('tray') === '1') document.querySelector<HTMLButtonElement>('[data-testid="tools-tray-toggle"]')?.click();
  const settings = params.get('settings');
  if (settings !== null) app.openSettings(isSettingsSection(settings) ? settings : undefined);
  const send = params.get('send');
  if (send) app.send(send);
}

// Picks the font stacks for the platform (app.css, `data-platform`), before the first render.
if (/Linux/.test(navigator.userAgent) && !/Android/.test(navigator.userAgent)) document.documentElement.dataset.platform = 'linux';

// Theme, text size and zoom from the last session, before the first render (no flash of the wrong theme).
const prefs = new PrefsState();
prefs.apply();

if (import.meta.env.DEV) {
  const theme = new URLSearchParams(location.search).get('theme');
  if (theme === 'dark' || theme === 'light') document.documentElement.dataset.theme = theme;
}

const target = document.getElementById('app');
if (target) {
  try {
    const app = new AppState(api, { prefs, sendBytes: uploadBytes });
    mount(App, { target, props: { app } });
    void app.init().then(() => (import.meta.env.DEV ? devHooks(app) : undefined));
  } catch (e) {
    console.error(e);
    renderFatal(target, e);
  }
}
