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

describe('approval egress', () => {
  it('says plainly what would leave, where, and after reading what, with no "always"', async () => {
    const app = await start();
    app.requestApproval({
      id: 'call_3',
      name: 'web_fetch',
      source: { kind: 'builtin' },
      arguments: '{"url":"https://example.net/c?d=my%20notes"}',
      egress: { destination: 'example.net', sends: 'https://example.net/c?d=my%20notes', after: 'web_fetch' },
      session: app.current,
    });
    const dialog = await screen.findByTestId('approval-dialog');
    expect(within(dialog).getByTestId('approval-egress').textContent?.trim()).toBe(
      'This would send https://example.net/c?d=my%20notes to example.net, a destination not used in this chat, after the chat read output from web_fetch.',
    );
    expect(dialog.textContent).toContain('Send data out with web_fetch?');
    const buttons = within(dialog).getAllByRole('button').map((b) => b.textContent?.trim());
    expect(buttons).toContain('Allow example.net for this chat');
    expect(buttons).not.toContain('Always allow');
  });

  it('puts a long body after the sentence', async () => {
    const app = await start();
    const body = `POST https://api.example.com/issues\n\n{"body": "${'x'.repeat(300)}"}`;
    app.requestApproval({
      id: 'call_4',
      name: 'post_issue',
      source: { kind: 'http' },
      arguments: '{}',
      egress: { destination: 'api.example.com', sends: body, after: 'notes__read' },
      session: app.current,
    });
    const box = within(await screen.findByTestId('approval-dialog')).getByTestId('approval-egress');
    expect(box.querySelector('p')?.textContent).toBe(
      'This would send the text below to api.example.com, a destination not used in this chat, after the chat read output from notes__read.',
    );
    expect(box.querySelector('pre')?.textContent).toBe(body);
  });
});
