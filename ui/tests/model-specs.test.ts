/**
 * What each model holds and costs where people choose it (issues 27 and 28, item 1), against the
 * fake backend: the model picker says each model's window and price where known, a local server's
 * models are free, an unknown price is "price unknown" (never $0).
 */
import { render, screen, waitFor } from '@testing-library/svelte';
import { beforeEach, describe, expect, it } from 'vitest';
import App from '../src/App.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

beforeEach(() => localStorage.clear());

describe('the model picker', () => {
  it("shows each model's window and price where known, free for a local server and 'price unknown' otherwise", async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const app = new AppState(backend, { schedule });
    render(App, { props: { app } });
    await app.init();
    const texts = () => [...(screen.getByTestId('model-picker') as HTMLSelectElement).options].map((o) => o.textContent?.trim());
    await waitFor(() => expect(texts()).toContain('gpt-4o — 128K · $2.50 / $10 per M'));
    expect(texts()).toContain('gpt-4o-mini — 128K · $0.15 / $0.60 per M');
    expect(texts()).toContain('o3-mini — price unknown');
    expect(texts().some((t) => t?.startsWith('llama3.2 — ') && t.endsWith('free'))).toBe(true);
    expect(texts().some((t) => t?.includes('$0 /'))).toBe(false);
  });
});
