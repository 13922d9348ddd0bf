/**
 * The provider editor's per-profile overrides (issues 27 and 28, item 1): context window, output
 * limit and prices show the catalogue's values as placeholders; text as a price is refused in the
 * form, a window of 0 and a negative price by the service (its own messages, from
 * errors.generated.json in the fake), and good values are saved on the profile.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';
import errors from '../src/lib/ipc/errors.generated.json';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);
const byTestId = <T extends HTMLElement = HTMLElement>(id: string) => screen.getByTestId(id) as T;

async function setValue(el: HTMLInputElement, value: string) {
  el.value = value;
  await fireEvent.input(el);
}

beforeEach(() => localStorage.clear());

describe('the provider editor', () => {
  it("overrides a model's window, output limit and prices, with the catalogue's as placeholders and bad values refused", async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const add = vi.spyOn(backend, 'addProvider');
    const app = new AppState(backend, { schedule });
    render(App, { props: { app } });
    await app.init();
    await fireEvent.click(screen.getByTestId('open-settings'));
    await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-providers'));
    await screen.findByTestId('settings-section-providers');
    await fireEvent.click(byTestId('provider-edit-openai'));
    await setValue(byTestId('provider-model'), 'gpt-4o');

    await waitFor(() => expect(byTestId<HTMLInputElement>('provider-context-window').placeholder).toBe('128000'));
    expect(byTestId<HTMLInputElement>('provider-output-limit').placeholder).toBe('16384');
    expect(byTestId<HTMLInputElement>('provider-price-input').placeholder).toBe('2.5');
    expect(byTestId<HTMLInputElement>('provider-price-cachedRead').placeholder).toBe('1.25');

    await setValue(byTestId('provider-price-input'), 'cheap');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.getByTestId('provider-prices').textContent).toContain('"cheap" is not a price'));
    expect(add).not.toHaveBeenCalled();

    await setValue(byTestId('provider-price-input'), '-1');
    await setValue(byTestId('provider-price-output'), '2');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.getByTestId('provider-prices').textContent).toContain(errors.profilePrices.message));

    await setValue(byTestId('provider-price-input'), '1.5');
    await setValue(byTestId('provider-context-window'), '0');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.getByTestId('provider-model-limits').textContent).toContain(errors.profileContextWindow.message));

    await setValue(byTestId('provider-context-window'), '64000');
    await fireEvent.click(byTestId('provider-save'));
    await waitFor(() => expect(screen.queryByTestId('provider-form')).toBeNull());
    const saved = add.mock.calls.at(-1)?.[0];
    expect(saved?.options?.contextWindow).toBe(64000);
    expect(saved?.options?.prices).toEqual({ input: 1.5, output: 2 });
    const [details] = await backend.describeModels('openai', ['gpt-4o']);
    expect(details?.resolved.source).toBe('profile');
    expect(details?.resolved.spec.contextWindow).toBe(64000);
  });
});
