/**
 * "Your tools" in Settings (HTTP API tools and command tools defined without code), against the
 * in-memory fake backend: what a person sees and what the shell receives.
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { CommandToolConfig, DefinedToolsOverview, HttpToolConfig } from '../src/lib/ipc/bindings';
import { FAKE_TOOLS_CONFIG } from '../src/lib/ipc/fake';
import { buildCommandConfig, buildHttpConfig, emptyCommandForm, emptyHttpForm, placeholders, tryArgsTemplate } from '../src/lib/util/defined';
import { openSection, row, setValue, start } from './defined-helpers';

const overview: DefinedToolsOverview = {
  configPath: '/etc/tools.json',
  problem: null,
  tools: [
    { name: 'weather', kind: 'http', description: 'Weather', target: 'GET https://api.example.com/v1/{{city}}', keys: ['weather'], asksFirst: false, state: { state: 'ready' } },
    {
      name: 'post_note',
      kind: 'http',
      description: 'Posts a note',
      target: 'POST https://notes.example.com/notes',
      keys: ['notes'],
      asksFirst: true,
      state: { state: 'needsApproval', reason: "Send the key 'notes' to https://notes.example.com with the tool 'post_note'." },
    },
    { name: 'grep_notes', kind: 'command', description: 'Search', target: "grep -n -- '{{pattern}}' notes.txt", keys: [], asksFirst: true, state: { state: 'needsApproval', reason: 'Run grep on this computer.' } },
    { name: 'broken', kind: 'http', description: 'Broken', target: 'GET https://{{host}}/x', keys: [], asksFirst: false, state: { state: 'invalid', reason: 'The url of the HTTP tool has a placeholder in its host.' } },
  ],
};

beforeEach(() => {
  localStorage.clear();
});

describe('Your tools', () => {
  it('lists each tool with its kind, target, keys, asks-first badge and state', async () => {
    await start({ definedTools: async () => structuredClone(overview) });
    const section = await openSection();

    const weather = await row('weather');
    expect(weather.dataset.state).toBe('ready');
    expect(within(weather).getByTestId('defined-kind').textContent).toBe('HTTP');
    expect(within(weather).getByTestId('defined-status').textContent).toBe('Ready');
    expect(within(weather).getByTestId('defined-target').textContent).toBe('GET https://api.example.com/v1/{{city}}');
    expect(within(weather).getByTestId('defined-keys').textContent).toContain('weather');
    expect(within(weather).queryByTestId('defined-asks')).toBeNull();
    expect(within(weather).getByTestId('defined-try-weather')).toBeTruthy();
    expect(within(weather).queryByTestId('defined-approve-weather')).toBeNull();

    const post = await row('post_note');
    expect(within(post).getByTestId('defined-status').textContent).toBe('Needs approval');
    expect(within(post).getByTestId('defined-asks').textContent).toBe('Asks first');
    expect(within(post).getByTestId('defined-reason').textContent).toContain("Send the key 'notes'");
    expect(within(post).getByTestId('defined-approve-post_note').textContent).toContain('Approve…');

    const grep = await row('grep_notes');
    expect(within(grep).getByTestId('defined-kind').textContent).toBe('Command');
    expect(within(grep).getByTestId('defined-status').textContent).toBe('Needs approval');
    // Only HTTP tools can be tried from here.
    expect(within(grep).queryByTestId('defined-try-grep_notes')).toBeNull();

    const broken = await row('broken');
    expect(broken.dataset.state).toBe('invalid');
    expect(within(broken).getByTestId('defined-status').textContent).toBe('Not usable');
    expect(within(broken).getByTestId('defined-reason').textContent).toContain('placeholder in its host');
    expect(within(broken).queryByTestId('defined-approve-broken')).toBeNull();

    expect(section.textContent).toContain('/etc/tools.json');
  });

  it('says what these tools are when there are none, and shows the file’s problem', async () => {
    await start({ definedTools: async () => ({ configPath: FAKE_TOOLS_CONFIG, problem: 'Line 2: expected a comma.', tools: [] }) });
    await openSection();
    expect((await screen.findByTestId('defined-empty')).textContent).toContain('HTTP tool');
    expect(screen.getByTestId('defined-empty').textContent).toContain('command tool');
    expect(screen.getByTestId('defined-problem').textContent).toContain('Line 2: expected a comma.');
  });

  it('adds an HTTP tool: the shell receives exactly the config the form describes', async () => {
    const { backend, app } = await start();
    const add = vi.spyOn(backend, 'addHttpTool');
    await openSection();
    await fireEvent.click(screen.getByTestId('defined-add-http'));
    const form = screen.getByTestId('http-form');
    await setValue(within(form).getByTestId('http-name'), 'notes_api');
    await setValue(within(form).getByTestId('http-description'), 'Creates a note');
    await setValue(within(form).getByTestId('http-method'), 'POST');
    await setValue(within(form).getByTestId('http-url'), 'https://notes.example.com/v1/{{folder}}/notes');
    await fireEvent.click(within(form).getByTestId('http-query-add'));
    await setValue(within(form).getByTestId('http-query-name-0'), 'lang');
    await setValue(within(form).getByTestId('http-query-value-0'), '{{lang}}');
    await fireEvent.click(within(form).getByTestId('http-headers-add'));
    await setValue(within(form).getByTestId('http-headers-name-0'), 'Authorization');
    await setValue(within(form).getByTestId('http-headers-value-0'), 'Bearer {{secret:notes}}');
    // A header row added and removed again leaves nothing behind.
    await fireEvent.click(within(form).getByTestId('http-headers-add'));
    await setValue(within(form).getByTestId('http-headers-name-1'), 'X-Drop');
    await fireEvent.click(within(form).getByTestId('http-headers-remove-1'));
    expect(within(form).getByTestId('http-key-note').textContent).toContain('dialog of its own');
    await setValue(within(form).getByTestId('http-body'), '{"text": "{{text}}"}');
    await setValue(within(form).getByTestId('http-pointer'), '/id');
    await setValue(within(form).getByTestId('http-timeout'), '20');
    await setValue(within(form).getByTestId('http-approval'), 'ask');
    await setValue(within(form).getByTestId('http-example'), '{"id": 42}');
    await fireEvent.click(within(form).getByTestId('http-allow-local'));
    await fireEvent.submit(form);

    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(add.mock.calls[0]?.[0]).toEqual({
      name: 'notes_api',
      description: 'Creates a note',
      method: 'POST',
      url: 'https://notes.example.com/v1/{{folder}}/notes',
      query: { lang: '{{lang}}' },
      headers: { Authorization: 'Bearer {{secret:notes}}' },
      body: { text: '{{text}}' },
      parameters: null,
      timeoutSecs: 20,
      responsePointer: '/id',
      approval: 'ask',
      allowLocalAddresses: true,
      exampleOutput: '{"id": 42}',
    } satisfies HttpToolConfig);
    await waitFor(() => expect(screen.queryByTestId('http-form')).toBeNull());
    // It sends a key: saved, but it waits for the person's approval.
    expect(within(await row('notes_api')).getByTestId('defined-status').textContent).toBe('Needs approval');
    expect(screen.getByTestId('defined-note').textContent).toContain('waits for your approval');
    expect(app.tools.some((t) => t.name === 'notes_api')).toBe(false);
  });

  it('shows the service’s config error inline under the form, which stays open', async () => {
    const message = "The url of the HTTP tool 'x' has a placeholder in its host: placeholders may only stand in the path and the query.";
    const { backend } = await start({ addHttpTool: () => Promise.reject({ kind: 'config', message, retryable: false }) });
    const add = vi.spyOn(backend, 'addHttpTool');
    await openSection();
    await fireEvent.click(screen.getByTestId('defined-add-http'));
    const form = screen.getByTestId('http-form');
    // What the form itself can tell comes first, next to its field.
    await fireEvent.submit(form);
    expect(add).not.toHaveBeenCalled();
    expect(within(form).getByTestId('http-name').getAttribute('aria-invalid')).toBe('true');
    expect(within(form).getByTestId('http-url').getAttribute('aria-invalid')).toBe('true');

    await setValue(within(form).getByTestId('http-name'), 'x');
    await setValue(within(form).getByTestId('http-description'), 'X');
    await setValue(within(form).getByTestId('http-url'), 'https://{{host}}/x');
    await fireEvent.submit(form);
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    const error = await screen.findByTestId('defined-form-error');
    expect(error.textContent).toContain(message);
    expect(error.getAttribute('role')).toBe('alert');
    expect(screen.getByTestId('http-form')).toBeTruthy();
  });

  it('adds a command tool: one argument per box, a warning when it would not ask', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addCommandTool');
    await openSection();
    await fireEvent.click(screen.getByTestId('defined-add-command'));
    const form = screen.getByTestId('command-form');
    const ask = within(form).getByTestId('command-ask') as HTMLInputElement;
    expect(ask.checked).toBe(true);
    expect(within(form).queryByTestId('command-ask-warning')).toBeNull();

    await setValue(within(form).getByTestId('command-name'), 'find_notes');
    await setValue(within(form).getByTestId('command-description'), 'Finds notes');
    await setValue(within(form).getByTestId('command-program'), 'grep');
    for (const [i, a] of ['-rn', '--', '{{pattern}}', 'My Notes'].entries()) {
      await fireEvent.click(within(form).getByTestId('command-arg-add'));
      await setValue(within(form).getByTestId(`command-arg-${i}`), a);
    }
    await setValue(within(form).getByTestId('command-cwd'), '/home/you');
    await fireEvent.click(within(form).getByTestId('command-env-add'));
    await setValue(within(form).getByTestId('command-env-name-0'), 'LC_ALL');
    await setValue(within(form).getByTestId('command-env-value-0'), 'C');

    await fireEvent.click(ask);
    const warning = within(form).getByTestId('command-ask-warning');
    expect(warning.textContent).toContain('without asking you');
    expect(ask.getAttribute('aria-describedby')).toBe(warning.id);
    await fireEvent.submit(form);

    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(add.mock.calls[0]?.[0]).toEqual({
      name: 'find_notes',
      description: 'Finds notes',
      argv: ['grep', '-rn', '--', '{{pattern}}', 'My Notes'],
      cwd: '/home/you',
      env: { LC_ALL: 'C' },
      timeoutSecs: null,
      approval: 'auto',
      exampleOutput: null,
    } satisfies CommandToolConfig);
    // A command tool waits for approval until the person agrees in the shell's dialog.
    expect(within(await row('find_notes')).getByTestId('defined-status').textContent).toBe('Needs approval');
  });

  it('“Approve…” calls approve_defined_tool and the tool becomes ready', async () => {
    const { backend, app } = await start();
    const approve = vi.spyOn(backend, 'approveDefinedTool');
    await openSection();
    await fireEvent.click(within(await row('grep_notes')).getByTestId('defined-approve-grep_notes'));
    expect(approve).toHaveBeenCalledWith('grep_notes');
    await waitFor(async () => expect(within(await row('grep_notes')).getByTestId('defined-status').textContent).toBe('Ready'));
    await waitFor(() => expect(app.tools.some((t) => t.name === 'grep_notes')).toBe(true));
  });

  it('“Edit” opens the form with the whole definition; the name cannot change there', async () => {
    await start();
    await openSection();
    await fireEvent.click(within(await row('weather')).getByTestId('defined-edit-weather'));
    const form = await screen.findByTestId('http-form');
    expect((within(form).getByTestId('http-name') as HTMLInputElement).readOnly).toBe(true);
    expect((within(form).getByTestId('http-url') as HTMLInputElement).value).toBe('https://api.weather.example/v1/current/{{city}}');
    expect((within(form).getByTestId('http-headers-value-0') as HTMLInputElement).value).toBe('{{secret:weather}}');
  });

  it('a refused approval is shown next to the tool', async () => {
    await start({ approveDefinedTool: () => Promise.reject({ kind: 'cancelled', message: "'grep_notes' was not allowed; it stays off.", retryable: false }) });
    await openSection();
    await fireEvent.click(within(await row('grep_notes')).getByTestId('defined-approve-grep_notes'));
    expect((await within(await row('grep_notes')).findByTestId('field-error')).textContent).toContain('was not allowed');
  });

  it('removes a tool only after confirming', async () => {
    const { backend } = await start();
    const remove = vi.spyOn(backend, 'removeDefinedTool');
    await openSection();
    await fireEvent.click(within(await row('grep_notes')).getByTestId('defined-remove-grep_notes'));
    expect(remove).not.toHaveBeenCalled();
    await fireEvent.click(await screen.findByTestId('confirm-delete'));
    expect(remove).toHaveBeenCalledWith('grep_notes');
    await waitFor(() => expect(screen.getAllByTestId('defined-tool').map((r) => r.dataset.name)).toEqual(['weather']));
  });

  it('edits a command tool: the saved config keeps what the form does not show', async () => {
    const { backend } = await start();
    const add = vi.spyOn(backend, 'addCommandTool');
    await openSection();
    await fireEvent.click(within(await row('grep_notes')).getByTestId('defined-edit-grep_notes'));
    const form = await screen.findByTestId('command-form');
    expect((within(form).getByTestId('command-program') as HTMLInputElement).value).toBe('grep');
    expect((within(form).getByTestId('command-arg-2') as HTMLInputElement).value).toBe('{{pattern}}');
    await fireEvent.click(within(form).getByTestId('command-arg-remove-0'));
    await fireEvent.submit(form);
    await waitFor(() => expect(add).toHaveBeenCalledTimes(1));
    expect(add.mock.calls[0]?.[0]).toMatchObject({ name: 'grep_notes', argv: ['grep', '--', '{{pattern}}', 'notes.txt'], cwd: '/home/you/notes' });
  });

  it('“Try it” sends the arguments and shows the exact request and the response', async () => {
    const { backend } = await start();
    const tryIt = vi.spyOn(backend, 'tryHttpTool');
    await openSection();
    const weather = await row('weather');
    await fireEvent.click(within(weather).getByTestId('defined-try-weather'));
    const panel = await within(weather).findByTestId('try-panel');
    const args = within(panel).getByTestId('try-args') as HTMLTextAreaElement;
    // Prefilled with one key per placeholder.
    await waitFor(() => expect(JSON.parse(args.value)).toEqual({ city: '' }));
    await setValue(args, '{"city": "Oslo"}');
    await fireEvent.submit(panel);
    expect(tryIt).toHaveBeenCalledWith('weather', { city: 'Oslo' });
    const request = await within(panel).findByTestId('try-request');
    expect(request.textContent).toContain('GET https://api.weather.example/v1/current/Oslo?units=metric');
    expect(request.textContent).toContain('X-Api-Key: [secret weather]');
    expect(within(panel).getByTestId('try-response').textContent).toContain('"city": "Oslo"');

    // Arguments that are not a JSON object are refused before anything is sent.
    await setValue(args, '[1]');
    await fireEvent.submit(panel);
    expect(tryIt).toHaveBeenCalledTimes(1);
    expect(panel.textContent).toContain('must be a JSON object');
  });

  it('“Try it” shows the error the call ended with', async () => {
    await start({ tryHttpTool: async () => ({ request: 'GET https://api.weather.example/v1/current/Oslo', ok: null, error: 'The API answered 401 Unauthorized.' }) });
    await openSection();
    const weather = await row('weather');
    await fireEvent.click(within(weather).getByTestId('defined-try-weather'));
    const panel = await within(weather).findByTestId('try-panel');
    await fireEvent.submit(panel);
    expect((await within(panel).findByTestId('try-error')).textContent).toBe('The API answered 401 Unauthorized.');
    expect(within(panel).getByTestId('try-request').textContent).toBe('GET https://api.weather.example/v1/current/Oslo');
    expect(within(panel).queryByTestId('try-response')).toBeNull();
  });
});

describe('the forms’ helpers', () => {
  it('finds placeholders but not keys, and builds a try template', () => {
    expect(placeholders('https://x/{{a}}/{{ b }}?k={{secret:key}}', '{{a}}')).toEqual(['a', 'b']);
    expect(tryArgsTemplate({ target: 'GET https://x/y' })).toBe('{}');
  });

  it('refuses a body that is not JSON, or on GET, and a timeout that is not a number', () => {
    const f = { ...emptyHttpForm(), name: 'x', description: 'y', url: 'https://x', body: '{nope', timeout: 'soon' };
    const out = buildHttpConfig(f);
    expect('errors' in out && out.errors.body).toContain('not valid JSON');
    expect('errors' in out && out.errors.timeout).toContain('whole number');
    const get = buildHttpConfig({ ...f, body: '{}', timeout: '' });
    expect('errors' in get && get.errors.body).toContain('GET requests send no body');
    const cmd = buildCommandConfig({ ...emptyCommandForm(), name: 'x', description: 'y' });
    expect('errors' in cmd && cmd.errors.program).toBeTruthy();
  });
});
