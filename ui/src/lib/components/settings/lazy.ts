/**
 * Settings is a chunk of its own, loaded the first time it opens: the app spends no memory on
 * screens the person has not opened. Once loaded it renders synchronously.
 */
import type { Component } from 'svelte';
import { loadOnce } from '../../util/loadOnce';

let view: Component | null = null;
const loadView = loadOnce(() => import('./Settings.svelte'));

/** The Settings screen if it is loaded. */
export function settingsView(): Component | null {
  return view;
}

/** Loads the Settings screen (once; a failed load is tried again at the next call). */
export async function loadSettings(): Promise<Component> {
  view = (await loadView()).default;
  return view;
}
