/**
 * Compaction as the person sees it: the boundary where it applies (live and reopened alike), the
 * summary shown inline, undo, pins, "Compact now" with its result or error, the notices, and the
 * fake doing what the service does.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { ChatEvent, StoredCompaction } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { compactionScript, toStored } from '../src/lib/ipc/fake/golden';
import { boundaryDetail, boundaryTitle, boundaryTooltip, compactedNotice, groupFallback, groupItem, groupTitle, groupTokens, placeBoundaries, tokensChange, undoAll, type CompactionModel } from '../src/lib/model/compaction';
import { fromStored, pendingAssistant, reduce, reduceAll } from '../src/lib/model/message';
import { splitAtOffsets } from '../src/lib/model/offsets';
import { AppState } from '../src/lib/state/app.svelte';

const SUMMARY_TEXT = 'The person asked for the time in Tokyo; get_time said 21:04 JST. Open question: which city next.';

const SUMMARY: CompactionModel = {
  compaction: { covered: 4, summary: SUMMARY_TEXT, stubbed: ['c1', 'c2'] },
  tokensBefore: 12_400,
  tokensAfter: 3_100,
  summariser: 'openai/gpt-4o-mini',
  reason: 'threshold',
  undone: false,
};

describe('the compaction model', () => {
  it('a live compacted event and the stored row build the same model', () => {
    const events = compactionScript(SUMMARY_TEXT, 4, null).map((e) => (e.type === 'started' ? { ...e, messageId: 'a1' } : e));
    const live = reduceAll(pendingAssistant(), events);
    expect(live.compactions).toHaveLength(1);
    const e = events.find((x) => x.type === 'compacted');
    if (e?.type !== 'compacted') throw new Error('no compaction in the script');
    // The row the Recorder keeps (the fake's recorder writes the same).
    const row: StoredCompaction = { id: 'k1', messageId: 'a1', compaction: e.compaction, tokensBefore: e.tokensBefore, tokensAfter: e.tokensAfter, reason: e.reason, createdAt: 1, undone: false };
    // Request rows are live only (stored answers read theirs from the usage commands).
    const { requests: _live, ...shown } = live;
    const { requests: _stored, ...reopened } = fromStored(toStored(live, 0, 0), [row, { ...row, id: 'k2', messageId: 'other' }]);
    expect(reopened).toEqual(shown);
  });

  it('each event is its own boundary; undo marks every one undone', () => {
    const e: ChatEvent = { type: 'compacted', compaction: SUMMARY.compaction, tokensBefore: 9, tokensAfter: 3, reason: 'tooLong' };
    const m = reduce(reduce(pendingAssistant('a1'), e), e);
    expect(m.compactions.map((c) => c.reason)).toEqual(['tooLong', 'tooLong']);
    expect(undoAll(m).compactions.every((c) => c.undone)).toBe(true);
  });

  it('a stored message without pins or compactions (an older shell) reads as none', () => {
    const m = fromStored(toStored(pendingAssistant('x'), 0, 0));
    expect(m.pinned).toBe(false);
    expect(m.compactions).toEqual([]);
  });

  it('places a boundary after the last card whose result it stubbed, at the top when none, below the message for Compact now', () => {
    const call = (id: string, iteration: number, textOffset: number) => ({ id, iteration, textOffset, index: 0 });
    const parts = splitAtOffsets('Looking. Found it. Done.', [call('c1', 1, 9), call('c2', 2, 19)]);
    expect(parts.map((p) => p.kind)).toEqual(['text', 'calls', 'text', 'calls', 'text']);
    const slots = placeBoundaries(parts, [
      { ...SUMMARY, tokensBefore: 1, compaction: { covered: 2, summary: 'S', stubbed: ['older'] } },
      { ...SUMMARY, tokensBefore: 2, compaction: { covered: 0, stubbed: ['older', 'c1'] } },
      { ...SUMMARY, tokensBefore: 3, compaction: { covered: 0, stubbed: ['c1', 'c2'] } },
      { ...SUMMARY, tokensBefore: 4, reason: 'manual' },
    ]);
    expect(slots.inside[0]?.map((c) => c.tokensBefore)).toEqual([1]);
    expect(slots.inside[2]?.map((c) => c.tokensBefore)).toEqual([2]);
    expect(slots.inside[4]?.map((c) => c.tokensBefore)).toEqual([3]);
    expect(slots.after.map((c) => c.tokensBefore)).toEqual([4]);
  });

  it('says what was done in plain words', () => {
    expect(boundaryTitle(SUMMARY)).toBe('Earlier messages summarised');
    expect(boundaryDetail(SUMMARY)).toBe('2 older tool results shortened too');
    const stubs: CompactionModel = { ...SUMMARY, compaction: { covered: 0, stubbed: ['c1'] } };
    expect(boundaryTitle(stubs)).toBe('1 older tool result shortened');
    expect(boundaryDetail(stubs)).toBe('the model can read them back');
    expect(boundaryDetail({ ...SUMMARY, undone: true })).toBe('undone: the full history goes with the next request');
    expect(tokensChange(SUMMARY)).toMatch(/^12.400 → 3.100 tokens$/);
    expect(boundaryTooltip(SUMMARY)).toContain('Nothing is deleted');
    expect(boundaryTooltip(SUMMARY)).toContain('4 earlier messages are sent as a summary written by openai/gpt-4o-mini');
    expect(compactedNotice(null)).toBe('Nothing to compact: the conversation is already short.');
  });

  it('several compactions at one place read as one: how many times, the whole range, each reason once', () => {
    const second: CompactionModel = { ...SUMMARY, tokensBefore: 9_000, tokensAfter: 2_500 };
    const third: CompactionModel = { ...SUMMARY, tokensBefore: 8_000, tokensAfter: 2_000, summariserFallback: 'The profile is gone.' };
    const g = { all: [SUMMARY, second, third], latest: third };
    expect(groupTitle(g)).toBe('Earlier messages summarised 3 times');
    expect(groupTokens(g)).toMatch(/^12.400 → 2.000 tokens$/);
    expect(groupFallback(g)).toBe('The profile is gone.');
    expect(groupTitle({ all: [SUMMARY], latest: SUMMARY })).toBe('Earlier messages summarised');
    const stubs: CompactionModel = { ...SUMMARY, compaction: { covered: 0, stubbed: ['c1'] } };
    expect(groupTitle({ all: [stubs, stubs], latest: stubs })).toBe('Compacted 2 times: 1 older tool result shortened');
    expect(groupTitle({ all: [stubs, SUMMARY], latest: SUMMARY })).toBe('Compacted 2 times: earlier messages summarised once');
    expect(groupItem(second, 1)).toMatch(/^2\. Earlier messages summarised by openai\/gpt-4o-mini · 9.000 → 2.500 tokens$/);
    expect(compactedNotice({ tokensBefore: 10, tokensAfter: 5, summariserFallback: 'The profile is gone.' })).toBe('Compacted: 10 → 5 tokens. The profile is gone.');
  });

  it('the fallback reason comes with the live event and the stored row alike', () => {
    const e: ChatEvent = { type: 'compacted', compaction: SUMMARY.compaction, tokensBefore: 9, tokensAfter: 3, summariser: 'gpt-4o-mini', summariserFallback: 'Gone.', reason: 'threshold' };
    expect(reduce(pendingAssistant('a1'), e).compactions[0]?.summariserFallback).toBe('Gone.');
    const row: StoredCompaction = { id: 'k', messageId: 'a1', compaction: SUMMARY.compaction, tokensBefore: 9, tokensAfter: 3, reason: 'manual', summariserFallback: 'Gone.', createdAt: 1, undone: false };
    expect(fromStored(toStored(pendingAssistant('a1'), 0, 0), [row]).compactions[0]?.summariserFallback).toBe('Gone.');
  });
});

let writeText: ReturnType<typeof vi.fn<(text: string) => Promise<void>>>;

beforeEach(() => {
  localStorage.clear();
  writeText = vi.fn<(text: string) => Promise<void>>(() => Promise.resolve());
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});

afterEach(() => {
  Reflect.deleteProperty(navigator, 'clipboard');
});

/** The app on the fake, with the seeded chats, the first one open. */
async function start() {
  const backend = createFakeBackend({ tickMs: 0 });
  const app = new AppState(backend, { schedule: (cb: () => void) => setTimeout(cb, 0) });
  render(App, { props: { app } });
  await app.init();
  const first = app.conversations[0];
  if (!first) throw new Error('the fake seeds conversations');
  await app.open(first.id);
  await waitFor(() => expect(screen.getAllByTestId('message').length).toBeGreaterThan(1));
  // A second exchange, so there is something older than the last one to compact (long enough that a summary saves tokens).
  await sendAndWait(app, `Some notes first: ${'the meeting moved to Thursday at 10:00, room 4B. '.repeat(30)}`);
  await sendAndWait(app, 'And in Paris?');
  return { app, backend, id: first.id };
}

async function sendAndWait(app: AppState, text: string) {
  const session = app.current;
  expect(app.send(text)).toBe(true);
  await waitFor(() => expect(session.running).toBe(false), { timeout: 5000 });
}

async function chooseMenu(item: string) {
  await fireEvent.click(screen.getByTestId('chat-menu'));
  await fireEvent.click(await screen.findByTestId(`chat-menu-${item}`));
}

describe('the boundary in a conversation', () => {
  it('shows mid-turn, between the tool rounds, and the same after the chat is opened again', async () => {
    const { app, backend, id } = await start();
    const seen: ChatEvent[] = [];
    const send = backend.sendMessage.bind(backend);
    backend.sendMessage = (req, h) => send(req, { ...h, onEvent: (e) => (seen.push(e), h.onEvent(e)) });
    await sendAndWait(app, 'Please compact and tell me the time');
    expect(seen.some((e) => e.type === 'compacted')).toBe(true);
    const answer = screen.getAllByTestId('message').at(-1) as HTMLElement;
    const boundary = within(answer).getByTestId('compaction-boundary');
    // Between the call of round 1 and the text of round 2: the card comes before it, the closing text after.
    const card = within(answer).getByTestId('tool-card');
    expect(card.compareDocumentPosition(boundary) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    const live = boundary.textContent;
    expect(live).toContain('Earlier messages summarised');
    await app.open(id); // reopened from the store
    await waitFor(() => expect(screen.getAllByTestId('compaction-boundary')).toHaveLength(1));
    expect(screen.getByTestId('compaction-boundary').textContent).toBe(live);
    // Every message stays shown above it.
    expect(screen.getAllByTestId('message').length).toBeGreaterThanOrEqual(4);
  });

  it('a turn that compacts three times shows one boundary saying so, each listed under it, the same after reopening', async () => {
    const { app, id } = await start();
    await sendAndWait(app, 'compact three times please');
    const answer = screen.getAllByTestId('message').at(-1) as HTMLElement;
    const boundaries = within(answer).getAllByTestId('compaction-boundary');
    expect(boundaries).toHaveLength(1);
    const boundary = boundaries[0]!;
    expect(boundary.dataset.count).toBe('3');
    expect(within(boundary).getByTestId('compaction-title').textContent).toBe('Earlier messages summarised 3 times');
    // From before the first to after the last.
    expect(within(boundary).getByTestId('compaction-tokens').textContent).toMatch(/^6.620 → 2.740 tokens$/);
    await fireEvent.click(within(boundary).getByTestId('compaction-show-each'));
    expect(within(boundary).getAllByTestId('compaction-each-item')).toHaveLength(3);
    // The summary shown is the one in force: the latest.
    await fireEvent.click(within(boundary).getByTestId('compaction-show-summary'));
    expect(within(boundary).getByTestId('compaction-summary').textContent).toContain('(compacted 3 times)');
    const live = within(boundary).getByTestId('compaction-title').textContent;
    await app.open(id);
    await waitFor(() => expect(screen.getAllByTestId('compaction-boundary')).toHaveLength(1));
    expect(screen.getByTestId('compaction-title').textContent).toBe(live);
    expect(screen.getByTestId('compaction-boundary').dataset.count).toBe('3');
  });

  it("when the picked summariser's profile is gone, the boundary says the chat's own model wrote it, live and reopened", async () => {
    const { app, id } = await start();
    await app.api.setChatSetup(id, { summariser: { kind: 'pick', provider: 'ollama', model: 'llama3.2' } });
    await app.api.removeProvider('ollama');
    await sendAndWait(app, 'compact please');
    const fallback = await screen.findByTestId('compaction-fallback');
    expect(fallback.textContent).toContain("The profile 'ollama' picked to write this chat's summaries no longer exists");
    expect(fallback.textContent).toContain('writes summaries instead');
    await app.open(id);
    await waitFor(() => expect(screen.getByTestId('compaction-fallback').textContent).toContain("'ollama'"));
  });

  it('show the summary opens it inline, readable and copyable', async () => {
    const { app } = await start();
    await sendAndWait(app, 'compact please');
    await fireEvent.click(screen.getByTestId('compaction-show-summary'));
    const panel = screen.getByTestId('compaction-summary');
    expect(panel.textContent).toContain('Summary of');
    expect(screen.getByTestId('compaction-show-summary').getAttribute('aria-expanded')).toBe('true');
    await fireEvent.click(within(panel).getByTestId('compaction-copy-summary'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(expect.stringContaining('Summary of')));
  });

  it('undo asks nothing, deletes nothing, and says the full history goes with the next request', async () => {
    const { app, backend, id } = await start();
    await sendAndWait(app, 'compact please');
    const before = (await backend.openConversation(id)).messages.length;
    await fireEvent.click(screen.getByTestId('compaction-undo'));
    await waitFor(() => expect(screen.getByTestId('compaction-boundary').dataset.undone).toBe('true'));
    expect(screen.queryByTestId('confirm-dialog')).toBeNull();
    expect(screen.getByTestId('compaction-detail').textContent).toContain('the full history goes with the next request');
    expect(screen.queryByTestId('compaction-undo')).toBeNull();
    const view = await backend.openConversation(id);
    expect(view.messages.length).toBe(before);
    expect((await backend.listCompactions(id)).map((c) => c.undone)).toEqual([true]);
    // The boundary stays, marked undone, after the chat is opened again.
    await app.open(id);
    await waitFor(() => expect(screen.getByTestId('compaction-boundary').dataset.undone).toBe('true'));
  });

  it('a summariser that fails: the turn goes on with the full history and the notice says so', async () => {
    const { app } = await start();
    // The chat's own model writes the summary: a profile whose server does not answer.
    app.choose({ provider: 'lmstudio', model: 'qwen' });
    await sendAndWait(app, 'compact please');
    const notice = screen.getByTestId('notice-context');
    expect(notice.textContent).toContain('Context window.');
    expect(notice.textContent).toContain('full history was sent');
    expect(screen.queryByTestId('compaction-boundary')).toBeNull();
  });
});

describe('Compact now', () => {
  it('with nothing before the latest question, says so and changes nothing', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const app = new AppState(backend, { schedule: (cb: () => void) => setTimeout(cb, 0) });
    render(App, { props: { app } });
    await app.init();
    const first = app.conversations[0];
    if (!first) throw new Error('the fake seeds conversations');
    await app.open(first.id);
    const toast = vi.spyOn(app, 'toast');
    await chooseMenu('compact');
    await waitFor(() => expect(toast).toHaveBeenCalled());
    const [err] = toast.mock.calls[0] ?? [];
    expect(typeof err === 'object' && err.message).toContain('Nothing to compact yet');
    expect(await backend.listCompactions(first.id)).toEqual([]);
  });

  it('compacts, shows the boundary below the last message and says tokens before → after', async () => {
    const { app } = await start();
    const notify = vi.spyOn(app, 'notify');
    await chooseMenu('compact');
    const boundary = await screen.findByTestId('compaction-boundary');
    expect(boundary.dataset.kind).toBe('summary');
    expect(within(boundary).getByTestId('compaction-tokens').textContent).toMatch(/^[\d,.]+ → [\d,.]+ tokens$/);
    expect(notify).toHaveBeenCalledWith(expect.stringMatching(/^Compacted: [\d,.]+ → [\d,.]+ tokens\.$/), 4000);
    expect(boundary.dataset.reason).toBe('manual');
    const last = screen.getAllByTestId('message').at(-1) as HTMLElement;
    expect(last.compareDocumentPosition(boundary) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("when the picked summariser cannot be used, says so in the notice and on the boundary", async () => {
    const { app, id } = await start();
    await app.api.setChatSetup(id, { summariser: { kind: 'pick', provider: 'ollama', model: 'llama3.2' } });
    await app.api.removeProvider('ollama');
    const notify = vi.spyOn(app, 'notify');
    await chooseMenu('compact');
    const boundary = await screen.findByTestId('compaction-boundary');
    expect(within(boundary).getByTestId('compaction-fallback').textContent).toContain("'ollama'");
    expect(notify).toHaveBeenCalledWith(expect.stringMatching(/^Compacted: .* tokens\. The profile 'ollama' picked to write this chat's summaries no longer exists; .* writes summaries instead\.$/), 4000);
  });

  it('a summariser that fails changes nothing and says so', async () => {
    const { app, id } = await start();
    await app.api.setChatSetup(id, { provider: 'lmstudio', model: 'qwen' });
    await app.open(id);
    const toast = vi.spyOn(app, 'toast');
    await chooseMenu('compact');
    await waitFor(() => expect(toast).toHaveBeenCalled());
    const [err, title] = toast.mock.calls[0] ?? [];
    expect(title).toBe('Could not compact');
    expect(typeof err === 'object' && err.message).toMatch(/did not answer .*The conversation is unchanged\.$/);
    expect(screen.queryByTestId('compaction-boundary')).toBeNull();
    expect(await app.api.listCompactions(id)).toEqual([]);
  });

  it('is not offered while an answer runs', async () => {
    const { app } = await start();
    app.send('approve the fetch please'); // waits for approval
    await waitFor(() => expect(app.current.running).toBe(true));
    await fireEvent.click(screen.getByTestId('chat-menu'));
    expect((await screen.findByTestId('chat-menu-compact')).getAttribute('aria-disabled')).toBe('true');
    await app.current.stop();
  });
});

describe('pins', () => {
  it('pins a message from its actions: a pin mark, a tooltip that says it is never summarised, kept by the store', async () => {
    const { app, id } = await start();
    const first = screen.getAllByTestId('message')[0] as HTMLElement;
    await fireEvent.click(within(first).getByTestId('pin-message'));
    const mark = await within(first).findByTestId('pin-mark');
    expect(mark.getAttribute('title')).toContain('never summarises');
    expect(within(first).getByTestId('unpin-message').getAttribute('aria-pressed')).toBe('true');
    const view = await app.api.openConversation(id);
    expect(view.messages[0]?.pinned).toBe(true);
    // Compact now leaves it out of the summary.
    await chooseMenu('compact');
    await fireEvent.click(await screen.findByTestId('compaction-show-summary'));
    expect(screen.getByTestId('compaction-summary').textContent).not.toContain(view.messages[0]?.content.slice(0, 40));
    await fireEvent.click(within(first).getByTestId('unpin-message'));
    await waitFor(() => expect(within(first).queryByTestId('pin-mark')).toBeNull());
  });

  it('a pin the shell refuses is taken back', async () => {
    const { app } = await start();
    app.api.setMessagePinned = () => Promise.reject({ kind: 'storage', message: 'disk full', retryable: false });
    const first = screen.getAllByTestId('message')[0] as HTMLElement;
    await fireEvent.click(within(first).getByTestId('pin-message'));
    await waitFor(() => expect(within(first).queryByTestId('pin-mark')).toBeNull());
  });
});

describe('settings for compaction', () => {
  it('Compact at is in Settings → Limits under Context: 80 by default, 50 to 95, saved as a percent', async () => {
    const { app } = await start();
    const update = vi.spyOn(app.api, 'updateSettings');
    app.openSettings('limits');
    const field = (await screen.findByTestId('limit-compact-at')) as HTMLInputElement;
    expect(field.placeholder).toBe('80');
    expect(screen.getByText('Context')).toBeTruthy();
    field.value = '99';
    await fireEvent.input(field);
    await fireEvent.change(field);
    expect((await screen.findByTestId('field-error')).textContent).toContain('from 50 to 95');
    field.value = '70';
    await fireEvent.input(field);
    await fireEvent.change(field);
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect(update.mock.calls[0]?.[0].limits.compactAtPercent).toBe(70);
  });

  it("the chat's parameters say its own model writes the summaries", async () => {
    await start();
    await chooseMenu('params');
    const dialog = await screen.findByTestId('chat-params-dialog');
    expect(within(dialog).getByTestId('chat-summariser-note').textContent).toContain('its own model writes the summary');
  });
});
