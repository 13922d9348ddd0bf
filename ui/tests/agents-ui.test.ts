/**
 * Agents in the app, against the in-memory fake backend: Settings → Agents (list, add, duplicate,
 * delete, toolsets), a new chat with an agent (its own model, remembered), and toolsets switched
 * on from the tools tray.
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { setValue, start } from './defined-helpers';

beforeEach(() => {
  localStorage.clear();
});

async function openAgents(): Promise<HTMLElement> {
  await fireEvent.click(screen.getByTestId('open-settings'));
  await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-agents'));
  return screen.findByTestId('settings-section-agents');
}

const rows = (id: string) => screen.queryAllByTestId(id).map((r) => r.dataset.name);

async function send(text: string) {
  const el = screen.getByTestId('composer-input') as HTMLTextAreaElement;
  el.value = text;
  await fireEvent.input(el);
  await fireEvent.keyDown(el, { key: 'Enter' });
}

describe('Settings → Agents', () => {
  it('lists agents and toolsets with what each gives and what is wrong', async () => {
    await start();
    await openAgents();
    await waitFor(() => expect(rows('agent-row')).toEqual(['Scout', 'Researcher']));
    expect(rows('toolset-row')).toEqual(['research']);
    const research = screen.getAllByTestId('toolset-row')[0]!;
    expect(research.textContent).toContain('used by Researcher');
    const researcher = screen.getAllByTestId('agent-row')[1]!;
    expect(researcher.textContent).toContain('as a tool: agent__Researcher');
    expect(researcher.textContent).toContain('at most 8 steps');
  });

  it('adds an agent from the form: the shell gets exactly what it describes', async () => {
    const { backend } = await start();
    const put = vi.spyOn(backend, 'putAgent');
    await openAgents();
    await fireEvent.click(await screen.findByTestId('agents-add'));
    const form = screen.getByTestId('agent-form');
    await setValue(within(form).getByTestId('agent-name'), 'has space');
    await fireEvent.submit(form);
    expect(put).not.toHaveBeenCalled();
    expect(within(form).getByTestId('agent-name').getAttribute('aria-invalid')).toBe('true');

    await setValue(within(form).getByTestId('agent-name'), 'Critic');
    await setValue(within(form).getByTestId('agent-description'), 'Finds the weak spot.');
    await setValue(within(form).getByTestId('agent-instructions'), 'Be blunt.');
    await setValue(within(form).getByTestId('agent-model'), 'gpt-4o');
    await fireEvent.click(within(form).getAllByTestId('agent-toolset')[0]!);
    await setValue(within(form).getByTestId('agent-prompt'), 'Ask Critic before you answer.');
    // The toolset's tools (its agents aside) can be made stricter while it runs.
    const approvals = within(form).getAllByTestId('agent-approval');
    expect(approvals.map((a) => a.dataset.tool)).toEqual(['web_fetch', 'get_time']);
    await setValue(approvals[0]!, 'ask');
    await setValue(within(form).getByTestId('agent-max-iterations'), '4');
    await fireEvent.click(within(form).getByTestId('agent-exclusive'));
    await fireEvent.submit(form);

    await waitFor(() => expect(put).toHaveBeenCalledTimes(1));
    expect(put.mock.calls[0]?.[0]).toMatchObject({
      name: 'Critic',
      description: 'Finds the weak spot.',
      instructions: 'Be blunt.',
      model: 'gpt-4o',
      toolsets: ['research'],
      maxIterations: 4,
      takesControl: false,
      exclusive: true,
      prompt: 'Ask Critic before you answer.',
      approval: { web_fetch: 'ask' },
    });
    await waitFor(() => expect(rows('agent-row')).toEqual(['Scout', 'Researcher', 'Critic']));
    expect(screen.queryByTestId('agent-form')).toBeNull();
  });

  it('duplicates and deletes an agent; a toolset in use says so instead of going', async () => {
    await start();
    await openAgents();
    await fireEvent.click(await screen.findByTestId('agent-duplicate-Scout'));
    await waitFor(() => expect(rows('agent-row')).toEqual(['Scout', 'Researcher', 'Scout-2']));
    await fireEvent.click(screen.getByTestId('agent-remove-Scout-2'));
    await fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(rows('agent-row')).toEqual(['Scout', 'Researcher']));

    await fireEvent.click(screen.getByTestId('toolset-remove-research'));
    await fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    expect((await screen.findByTestId('agents-note')).textContent).toContain('take it out of the agent first');
    expect(rows('toolset-row')).toEqual(['research']);
  });

  it('adds a toolset picked from what exists (search, Enter adds the first match; free text is never added)', async () => {
    const { backend } = await start();
    const put = vi.spyOn(backend, 'putToolset');
    await openAgents();
    await fireEvent.click(await screen.findByTestId('toolsets-add'));
    const form = screen.getByTestId('toolset-form');
    await setValue(within(form).getByTestId('toolset-name'), 'clock');
    const search = within(form).getByTestId('toolset-tools-search');
    await fireEvent.focus(search);
    await setValue(search, 'get_ti');
    expect(within(form).getAllByTestId('toolset-tools-option').map((o) => o.dataset.name)).toEqual(['get_time']);
    await fireEvent.keyDown(search, { key: 'Enter' });
    await setValue(search, 'no_such_tool');
    expect(within(form).queryAllByTestId('toolset-tools-option')).toHaveLength(0);
    await fireEvent.keyDown(search, { key: 'Enter' });
    await setValue(search, 'builtin');
    await fireEvent.click(within(form).getAllByTestId('toolset-tools-option').find((o) => o.dataset.name === 'builtin')!);
    expect(within(form).getAllByTestId('toolset-tools-chosen').map((c) => c.dataset.name)).toEqual(['get_time', 'builtin']);
    await fireEvent.submit(form);
    await waitFor(() => expect(put).toHaveBeenCalledWith({ name: 'clock', description: '', tools: ['get_time', 'builtin'] }));
  });

  it('marks an entry that names nothing now as not installed, and it can be removed', async () => {
    const { backend, app } = await start();
    app.agents = await backend.putToolset({ name: 'old', description: '', tools: ['get_time', 'gone_tool'] });
    const put = vi.spyOn(backend, 'putToolset');
    await openAgents();
    await fireEvent.click(await screen.findByTestId('toolset-edit-old'));
    const form = screen.getByTestId('toolset-form');
    const chosen = within(form).getAllByTestId('toolset-tools-chosen');
    expect(chosen.map((c) => [c.dataset.name, c.dataset.missing ?? null])).toEqual([['get_time', null], ['gone_tool', 'true']]);
    expect(chosen[1]?.textContent).toContain('not installed');
    await fireEvent.click(within(chosen[1] as HTMLElement).getByTestId('toolset-tools-remove'));
    await fireEvent.submit(form);
    await waitFor(() => expect(put).toHaveBeenCalledWith({ name: 'old', description: '', tools: ['get_time'] }));
  });
});

describe('an agent whose names no longer exist', () => {
  it('shows a removed tool\'s override and an unlisted model as such, and drops them', async () => {
    const { backend, app } = await start();
    const put = vi.spyOn(backend, 'putAgent');
    app.agents = await backend.putAgent({
      name: 'Old', description: 'Kept from before.', instructions: 'Answer.', profile: 'openai', model: 'gpt-3-retired',
      toolsets: ['research'], approval: { get_time: 'ask', gone_tool: 'deny' },
    });
    await openAgents();
    await fireEvent.click(await screen.findByTestId('agent-edit-Old'));
    const form = screen.getByTestId('agent-form');
    expect(within(form).getByTestId('agent-model-unlisted').textContent).toContain('openai does not list this model');
    expect([...within(form).getByTestId('agent-model-options').querySelectorAll('option')].map((o) => o.value)).toEqual(['gpt-4o-mini', 'gpt-4o', 'o3-mini']);
    const override = within(form).getByTestId('agent-approval-gone');
    expect(override.dataset.tool).toBe('gone_tool');
    expect(override.textContent).toContain('removed (was refused)');

    await fireEvent.click(within(override).getByTestId('agent-approval-drop'));
    await setValue(within(form).getByTestId('agent-model'), 'gpt-4o');
    expect(within(form).queryByTestId('agent-model-unlisted')).toBeNull();
    await fireEvent.submit(form);
    await waitFor(() => expect(put).toHaveBeenCalledWith(expect.objectContaining({ name: 'Old', model: 'gpt-4o', toolsets: ['research'], approval: { get_time: 'ask' } })));
  });
});

describe('a chat with an agent', () => {
  it('is picked for a new chat, sent with the agent and no model of its own, and remembered', async () => {
    const { backend, app } = await start();
    const sent = vi.spyOn(backend, 'sendMessage');
    const picker = (await screen.findByTestId('agent-picker')) as HTMLSelectElement;
    await setValue(picker, 'Researcher');
    expect(screen.queryByTestId('model-picker')).toBeNull();
    // The tray shows the agent's tools (its toolset's), not every tool.
    await waitFor(() => expect(app.tools.map((t) => t.name)).toEqual(['web_fetch', 'get_time', 'agent__Scout']));
    await setValue(picker, '');
    await waitFor(() => expect(app.tools.some((t) => t.name === 'weather')).toBe(true));
    await setValue(picker, 'Researcher');
    await send('Who wrote it?');
    await waitFor(() => expect(sent).toHaveBeenCalledTimes(1));
    expect(sent.mock.calls[0]?.[0]).toMatchObject({ agent: 'Researcher', provider: null, model: null });

    // Its answer nests the scouts' work in the agent's card.
    await waitFor(() => expect(screen.getAllByTestId('agent-run').map((r) => r.dataset.instance)).toEqual(['Scout[1]', 'Scout[2]']));
    await waitFor(() => expect(app.current.running).toBe(false));
    expect(screen.getByTestId('agent-chip').textContent?.trim()).toBe('Researcher');
    expect(screen.queryByTestId('agent-picker')).toBeNull();

    // Reopened from the list, the chat still names its agent and shows the same runs.
    const id = app.current.conversationId!;
    app.newChat();
    await app.open(id);
    await waitFor(() => expect(screen.getByTestId('agent-chip').textContent?.trim()).toBe('Researcher'));
    expect(screen.getAllByTestId('agent-run').map((r) => [r.dataset.instance, r.dataset.status])).toEqual([
      ['Scout[1]', 'complete'],
      ['Scout[2]', 'complete'],
    ]);
  });

  it('gets only the tools of the toolsets switched on in the tray', async () => {
    const { backend } = await start();
    const sent = vi.spyOn(backend, 'sendMessage');
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    const toggle = await waitFor(() => screen.getAllByTestId('toolset-toggle').find((t) => t.dataset.toolset === 'research')!);
    await fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-pressed')).toBe('true');
    await send('Look it up');
    await waitFor(() => expect(sent).toHaveBeenCalledTimes(1));
    expect(sent.mock.calls[0]?.[0]).toMatchObject({ toolsets: ['research'] });
  });
});
