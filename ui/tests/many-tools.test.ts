/**
 * Many tools and cards that say what happened (issue 30, items 2 and 4): the tray's filter and
 * per-source switches with 200 tools, a switched-off tool's card, a missing key's card, and
 * parallel sub-agent cards that fold to headers telling them apart.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import ToolCard from '../src/lib/components/ToolCard.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ToolInfo } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { tool } from '../src/lib/ipc/fake/catalog';
import type { ToolCallModel } from '../src/lib/model/message';
import { pendingAssistant, reduce } from '../src/lib/model/message';
import { AppState } from '../src/lib/state/app.svelte';
import { agentMessageStart, keyFix, matchesFilter, switchState, switchedOffInChat, toolParts } from '../src/lib/util/tools';
import WithApp from './fixtures/WithApp.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

/** 2 built-in tools and 198 of one MCP server with long names. */
function manyTools(): ToolInfo[] {
  const big: ToolInfo[] = Array.from({ length: 198 }, (_, i) =>
    tool(`bigserver__${i % 2 ? 'query' : 'write'}_records_of_the_accounting_ledger_${i}`, `Tool number ${i}.`, { kind: 'mcp', server: 'bigserver' }),
  );
  return [tool('get_time', 'Current time.', { kind: 'builtin' }), tool('web_fetch', 'Fetches a page.', { kind: 'builtin' }), ...big];
}

async function start(backend: Backend) {
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return app;
}

/** A fake whose tool list is `tools`, with each chat's switched-off set applied. */
function backendWith(tools: ToolInfo[], opts: { empty?: boolean } = {}) {
  const backend = createFakeBackend({ tickMs: 0, empty: opts.empty ?? true });
  const off = new Set<string>();
  backend.listTools = async () => tools.map((t) => ({ ...t, disabledForChat: off.has(t.name) }));
  const bulk = vi.fn(async (_cid: string, names: string[], disabled: boolean) => {
    for (const n of names) {
      if (disabled) off.add(n);
      else off.delete(n);
    }
  });
  backend.setChatToolsDisabled = bulk;
  return { backend, bulk };
}

const rows = () => screen.getAllByTestId('tool-row');
const sourceSwitch = (key: string) =>
  screen.getAllByTestId('tool-source-switch').find((el) => el.dataset.group === key) as HTMLInputElement;

beforeEach(() => localStorage.clear());

describe('the tools tray with 200 tools', () => {
  it('filters by every typed word and says how many it shows; Escape clears the filter first', async () => {
    const { backend } = backendWith(manyTools());
    await start(backend);
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    expect(rows()).toHaveLength(200);
    const filter = screen.getByTestId('tools-filter') as HTMLInputElement;
    expect(document.activeElement).toBe(filter);

    await fireEvent.input(filter, { target: { value: 'query ledger_1' } });
    const shown = rows().map((r) => r.dataset.toolName);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((n) => n?.includes('query') && n.includes('ledger_1'))).toBe(true);
    expect(screen.getByTestId('tools-shown').textContent).toBe(`${shown.length} of 200`);

    await fireEvent.input(filter, { target: { value: 'no such tool at all' } });
    expect(screen.queryAllByTestId('tool-row')).toHaveLength(0);
    expect(screen.getByTestId('tools-no-match').textContent).toContain('no such tool at all');

    // Escape clears a filled filter first, then closes the tray.
    await fireEvent.keyDown(filter, { key: 'Escape' });
    expect(filter.value).toBe('');
    expect(rows()).toHaveLength(200);
  });

  it('shows a server tool by its own name under its server, the whole name in the tooltip', async () => {
    const { backend } = backendWith(manyTools());
    await start(backend);
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    const row = rows().find((r) => r.dataset.toolName === 'bigserver__write_records_of_the_accounting_ledger_0') as HTMLElement;
    const name = row.querySelector('.name') as HTMLElement;
    expect(name.textContent).toBe('write_records_of_the_accounting_ledger_0');
    expect(name.title).toBe('bigserver__write_records_of_the_accounting_ledger_0');
    const group = screen.getAllByTestId('tool-group').find((g) => g.dataset.group === 'mcp:bigserver') as HTMLElement;
    expect(within(group).getByRole('heading').textContent).toBe('bigserver');
  });

  it("switches a whole server off and on for a new chat, mixed when only some of it is on", async () => {
    const { backend } = backendWith(manyTools());
    const app = await start(backend);
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    const big = () => sourceSwitch('mcp:bigserver');
    expect(big().dataset.state).toBe('on');
    expect(big().checked).toBe(true);

    const one = rows().find((r) => r.dataset.toolName?.endsWith('_5')) as HTMLElement;
    await fireEvent.click(within(one).getByTestId('tool-disable'));
    expect(big().dataset.state).toBe('mixed');
    expect(big().indeterminate).toBe(true);
    expect(big().getAttribute('aria-checked')).toBe('mixed');

    // Partly on: the switch turns everything on.
    await fireEvent.click(big());
    await waitFor(() => expect(big().dataset.state).toBe('on'));
    await fireEvent.click(big());
    await waitFor(() => expect(big().dataset.state).toBe('off'));
    expect(app.current.draftDisabled).toHaveLength(198);
    expect(sourceSwitch('builtin').dataset.state).toBe('on');
    expect(rows().filter((r) => r.classList.contains('off'))).toHaveLength(198);
  });

  it('switches a whole server for an existing chat in one call, also the tools the filter hides', async () => {
    const { backend, bulk } = backendWith(manyTools(), { empty: false });
    const app = await start(backend);
    const id = app.conversations[0]!.id;
    await app.open(id);
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    await fireEvent.input(screen.getByTestId('tools-filter'), { target: { value: 'ledger_7' } });
    await fireEvent.click(sourceSwitch('mcp:bigserver'));
    await waitFor(() => expect(bulk).toHaveBeenCalledTimes(1));
    expect(bulk.mock.calls[0]![0]).toBe(id);
    expect(bulk.mock.calls[0]![1]).toHaveLength(198);
    expect(bulk.mock.calls[0]![2]).toBe(true);
    await waitFor(() => expect(app.tools.filter((t) => t.disabledForChat)).toHaveLength(198));
  });
});

describe('tool helpers', () => {
  it('split a server tool from its server, and an agent from its prefix', () => {
    expect(toolParts('files__read_file', { kind: 'mcp', server: 'files' })).toEqual({ server: 'files', tool: 'read_file' });
    expect(toolParts('agent__Scout', { kind: 'agent' })).toEqual({ server: null, tool: 'Scout' });
    expect(toolParts('get_time', { kind: 'builtin' })).toEqual({ server: null, tool: 'get_time' });
  });

  it('filter on name, description and server, every word', () => {
    const t = tool('files__read_file', 'Reads a file.', { kind: 'mcp', server: 'files' });
    expect(matchesFilter(t, 'FILES reads')).toBe(true);
    expect(matchesFilter(t, 'read write')).toBe(false);
    expect(matchesFilter(t, '  ')).toBe(true);
  });

  it('say on, off or mixed', () => {
    const ts = [tool('a', '', { kind: 'builtin' }), tool('b', '', { kind: 'builtin' })];
    expect(switchState(ts, () => true)).toBe('on');
    expect(switchState(ts, () => false)).toBe('off');
    expect(switchState(ts, (t) => t.name === 'a')).toBe('mixed');
  });

  it('know the engine’s "switched off" answer and the tools’ missing-key messages (their words, as the Rust tests pin them)', () => {
    const off = { name: 'get_time', status: 'skipped' as const, result: { status: 'skipped' as const, output: 'get_time is switched off in this chat. Answer without it, or ask the user to switch it back on.', durationMs: 0 } };
    expect(switchedOffInChat(off)).toBe(true);
    expect(switchedOffInChat({ ...off, name: 'web_fetch' })).toBe(false);
    const err = (output: string) => ({ status: 'error' as const, result: { status: 'error' as const, output, durationMs: 1 } });
    expect(keyFix(err('Web search needs a Tavily API key. Add it in Settings → Search & web tools (or set SWITCHBOARD_KEY_TAVILY), then try again.'))).toBe('web');
    expect(keyFix(err("The HTTP tool 'needs_key' needs the key 'other': add it in Settings → Keys."))).toBe('keys');
    expect(keyFix(err('The page at https://x answered 500.'))).toBeNull();
  });

  it('take the start of an agent call’s message on one line', () => {
    expect(agentMessageStart('{"message":"Find the\\nopening hours"}')).toBe('Find the opening hours');
    expect(agentMessageStart(JSON.stringify({ message: 'x'.repeat(200) }), 20)).toHaveLength(20);
    expect(agentMessageStart('{nope')).toBe('');
  });
});

function call(extra: Partial<ToolCallModel>): ToolCallModel {
  return {
    id: 'c1',
    name: 'get_time',
    source: { kind: 'builtin' },
    arguments: '{}',
    textOffset: 0,
    iteration: 1,
    index: 0,
    status: 'ok',
    result: null,
    progress: [],
    awaitingApproval: false,
    runs: [],
    ...extra,
  };
}

describe('a card that says what happened', () => {
  const offText = 'get_time is switched off in this chat. Answer without it, or ask the user to switch it back on.';

  it('says a switched-off tool is off in this chat and offers to switch it back on', async () => {
    const { backend } = backendWith([tool('get_time', 'Current time.', { kind: 'builtin' })]);
    const app = new AppState(backend, { schedule });
    await app.loadTools();
    await app.toggleDisabled('get_time');
    const c = call({ status: 'skipped', result: { status: 'skipped', output: offText, durationMs: 0 } });
    render(WithApp, { props: { app, call: c } });
    expect(screen.getByTestId('tool-summary').textContent).toBe('get_time is switched off in this chat');
    expect(screen.getByTestId('tool-card').textContent).toContain('Switched off');
    expect(screen.getByTestId('tool-card').textContent).not.toContain('Unknown tool');
    await fireEvent.click(screen.getByTestId('tool-switch-on'));
    await waitFor(() => expect(app.tools[0]!.disabledForChat).toBe(false));
    // Back on: nothing left to offer.
    await waitFor(() => expect(screen.queryByTestId('tool-switch-on')).toBeNull());
  });

  it('offers "Add the key" on the page the tool named', async () => {
    const app = new AppState(createFakeBackend({ tickMs: 0, empty: true }), { schedule });
    const output = 'Web search needs a Tavily API key. Add it in Settings → Search & web tools (or set SWITCHBOARD_KEY_TAVILY), then try again.';
    render(WithApp, { props: { app, call: call({ name: 'web_search', status: 'error', result: { status: 'error', output, durationMs: 3 } }) } });
    await fireEvent.click(screen.getByTestId('tool-add-key'));
    expect(app.settingsOpen).toBe(true);
    expect(app.settingsSection).toBe('web');
  });

  it('keeps the summary when the server and tool names are long: each is its own element with its tooltip', () => {
    const name = 'a_very_long_server_name_for_testing__and_an_even_longer_tool_name_that_goes_on_and_on';
    render(ToolCard, {
      props: {
        call: call({ name, source: { kind: 'mcp', server: 'a_very_long_server_name_for_testing' }, result: { status: 'ok', output: 'fine', durationMs: 1 } }),
        live: false,
      },
    });
    const card = screen.getByTestId('tool-card');
    expect(card.querySelector('.name')?.textContent).toBe('and_an_even_longer_tool_name_that_goes_on_and_on');
    expect((card.querySelector('.name') as HTMLElement).title).toBe(name);
    expect(card.querySelector('.source')?.textContent).toBe('MCP: a_very_long_server_name_for_testing');
    expect(screen.getByTestId('tool-summary').textContent).toBe('ok · fine');
  });

  it('folds parallel sub-agents to headers with the instance, the start of the message and the status; output as Markdown', () => {
    const agentCall = (id: string, instance: string, message: string, answer: string): ToolCallModel => {
      let run = pendingAssistant();
      run = reduce(run, { type: 'textDelta', text: answer });
      run = reduce(run, { type: 'done', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 }, toolCallsMade: 0 });
      return call({
        id,
        name: 'agent__Scout',
        source: { kind: 'agent' },
        arguments: JSON.stringify({ message }),
        status: 'ok',
        result: { status: 'ok', output: answer, durationMs: 5 },
        runs: [{ instance, model: run }],
      });
    };
    render(ToolCard, { props: { call: agentCall('a', 'Scout[1]', 'Find the opening hours of the Louvre', '**Open** 9 to 6.'), live: false } });
    render(ToolCard, { props: { call: agentCall('b', 'Scout[2]', 'Find the ticket prices of the Louvre', '**22 €** at the door.'), live: false } });
    const cards = screen.getAllByTestId('tool-card');
    expect(cards.map((c) => within(c).getByTestId('tool-card-instance').textContent)).toEqual(['Scout[1]', 'Scout[2]']);
    expect(cards.map((c) => within(c).getByTestId('tool-card-message').textContent)).toEqual([
      'Find the opening hours of the Louvre',
      'Find the ticket prices of the Louvre',
    ]);
    for (const c of cards) {
      expect(within(c).getAllByRole('button')[0]!.getAttribute('aria-expanded')).toBe('false');
      expect(within(c).getAllByRole('button')[0]!.textContent).toContain('Done');
    }
    expect(within(cards[0]!).getByTestId('agent-output').querySelector('strong')?.textContent).toBe('Open');
    expect(within(cards[0]!).getByTestId('agent-run-gist').textContent).toBe('Open 9 to 6.');
  });
});

describe('Settings → Tools', () => {
  it('groups tools by source, each source with a switch for all of its tools (mixed when partly on), and filters', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const update = vi.spyOn(backend, 'updateSettings');
    await start(backend);
    await fireEvent.click(screen.getByTestId('open-settings'));
    await fireEvent.click(screen.getByTestId('settings-nav-tools'));
    await screen.findByTestId('settings-section-tools');
    const groups = await screen.findAllByTestId('settings-tool-group');
    expect(groups[0]!.dataset.group).toBe('builtin');
    const builtin = () => screen.getAllByTestId('settings-source-switch').find((s) => s.dataset.group === 'builtin') as HTMLInputElement;
    // `shell` is off in Settings: the built-in source is partly on.
    await waitFor(() => expect(builtin().dataset.state).toBe('mixed'));
    expect(builtin().indeterminate).toBe(true);

    await fireEvent.click(builtin());
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect(update.mock.calls[0]![0].tools.disabled).toEqual([]);
    await waitFor(() => expect(builtin().dataset.state).toBe('on'));

    await fireEvent.click(builtin());
    await waitFor(() => expect(update).toHaveBeenCalledTimes(2));
    const builtinNames = within(groups[0]!)
      .getAllByTestId('settings-tool-row')
      .map((r) => r.dataset.toolName)
      .sort();
    expect(update.mock.calls[1]![0].tools.disabled).toEqual(builtinNames);

    await fireEvent.input(screen.getByTestId('settings-tools-filter'), { target: { value: 'weather' } });
    expect(screen.getAllByTestId('settings-tool-row').map((r) => r.dataset.toolName)).toEqual(['weather']);
  });
});
