/**
 * The approval dialog shows what a call will do in the tool's own words when the tool says more
 * than its arguments (a command tool's exact command line), with the raw arguments one click away.
 */
import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import App from '../src/App.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start() {
  const app = new AppState(createFakeBackend({ tickMs: 0, empty: true }), { schedule });
  render(App, { props: { app } });
  await app.init();
  return app;
}

describe('approval preview', () => {
  it('shows the exact command line first and keeps the arguments behind a disclosure', async () => {
    const app = await start();
    const line = "printf '<%s>' 'a b; rm -rf / $(id)'   (in /home/me)";
    app.requestApproval({
      id: 'call_1',
      name: 'shout',
      source: { kind: 'command' },
      arguments: '{"text":"a b; rm -rf / $(id)"}',
      preview: line,
      session: app.current,
    });
    const dialog = await screen.findByTestId('approval-dialog');
    expect(dialog.textContent).toContain('Source: command');
    expect(dialog.textContent).toContain('It will do exactly this:');
    expect(within(dialog).getByTestId('approval-preview').textContent).toBe(line);
    const raw = dialog.querySelector('details');
    expect(raw?.open).toBe(false);
    expect(raw?.textContent).toContain('"text": "a b; rm -rf / $(id)"');
  });

  it('shows the arguments as before when the tool adds nothing', async () => {
    const app = await start();
    app.requestApproval({ id: 'call_2', name: 'get_time', source: { kind: 'builtin' }, arguments: '{"timezone":"UTC"}', session: app.current });
    const dialog = await screen.findByTestId('approval-dialog');
    expect(dialog.textContent).toContain('It will run with exactly these arguments:');
    expect(within(dialog).queryByTestId('approval-preview')).toBeNull();
    expect(dialog.querySelector('details')).toBeNull();
  });
});
