/**
 * Settings' model catalogue line (issue 27, item 1): it says which catalogue is in use, Refresh
 * replaces it, and a refresh that fails leaves the one in use and says why.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ModelCatalogue from '../src/lib/components/settings/ModelCatalogue.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';

describe('the model catalogue in Settings', () => {
  it('says which snapshot is in use and Refresh replaces it', async () => {
    const api = createFakeBackend({ tickMs: 0 });
    render(ModelCatalogue, { props: { api } });
    await waitFor(() => expect(screen.getByTestId('model-catalogue-what').textContent).toBe('bundled LiteLLM snapshot of 2026-11-27 (4 models)'));
    await fireEvent.click(screen.getByTestId('model-catalogue-refresh'));
    await waitFor(() => expect(screen.getByTestId('model-catalogue-refreshed')).toBeTruthy());
    expect(screen.getByTestId('model-catalogue-what').textContent).toMatch(/^LiteLLM snapshot of \d{4}-\d{2}-\d{2} \(4 models\)$/);
  });

  it('keeps the one in use and says why when a refresh fails', async () => {
    const api = createFakeBackend({ tickMs: 0 });
    const message = 'The model catalogue could not be downloaded from https://raw.githubusercontent.com/…: the server answered HTTP 404 Not Found.';
    api.refreshModelCatalogue = () => Promise.reject({ kind: 'network', message, retryable: true });
    render(ModelCatalogue, { props: { api } });
    await waitFor(() => expect(screen.getByTestId('model-catalogue-what').textContent).toContain('bundled'));
    await fireEvent.click(screen.getByTestId('model-catalogue-refresh'));
    await waitFor(() => expect(screen.getByTestId('model-catalogue-error').textContent).toContain('HTTP 404'));
    expect(screen.getByTestId('model-catalogue-what').textContent).toContain('bundled LiteLLM snapshot of 2026-11-27');
  });
});
