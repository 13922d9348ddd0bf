/**
 * Tool cards fold to one line once the call has ended, with a short summary of how it ended, and
 * open again from the keyboard or a click. Images stay on screen when folded.
 */
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ToolCard from '../src/lib/components/ToolCard.svelte';
import type { ToolImage, ToolStatus } from '../src/lib/ipc/bindings';
import type { ToolCallModel } from '../src/lib/model/message';
import { summarizeOutput, toolSummary } from '../src/lib/util/format';

const png: ToolImage = { mimeType: 'image/png', data: 'iVBORw0KGgo=' };

function call(status: ToolCallModel['status'], output: string | null, extra: Partial<ToolCallModel> = {}): ToolCallModel {
  return {
    id: 'c1',
    name: 'get_time',
    source: { kind: 'builtin' },
    arguments: '{"timezone":"UTC"}',
    textOffset: 0,
    iteration: 1,
    index: 0,
    status,
    result: output === null ? null : { status: status as ToolStatus, output, durationMs: 4 },
    progress: [],
    awaitingApproval: false,
    runs: [],
    ...extra,
  };
}

const head = () => within(screen.getByTestId('tool-card')).getAllByRole('button')[0] as HTMLButtonElement;
const body = () => document.getElementById(head().getAttribute('aria-controls') ?? '') as HTMLElement;
const folded = () => head().getAttribute('aria-expanded') === 'false' && body().classList.contains('folded');
const summary = () => screen.queryByTestId('tool-summary')?.textContent ?? null;

describe('a finished tool card', () => {
  it('is one line with its name, source and a summary of the result', () => {
    render(ToolCard, { props: { call: call('ok', '{"time":"2026-11-24 17:05 UTC","timezone":"UTC"}'), live: false } });
    const card = screen.getByTestId('tool-card');
    expect(card.dataset.toolName).toBe('get_time');
    expect(card.dataset.status).toBe('ok');
    expect(card.querySelector('.source')?.textContent).toBe('built-in');
    expect(folded()).toBe(true);
    expect(summary()).toBe('ok · time: 2026-11-24 17:05 UTC, timezone: UTC');
    expect(head().textContent).toContain('Done');
  });

  it('opens and folds with a click, and is a real button (Enter and Space, focus ring) with the body it controls', async () => {
    render(ToolCard, { props: { call: call('ok', 'line one\nline two'), live: false } });
    const h = head();
    expect(h.tagName).toBe('BUTTON');
    expect(h.type).toBe('button');
    h.focus();
    expect(document.activeElement).toBe(h);
    expect(folded()).toBe(true);
    await fireEvent.click(h);
    expect(h.getAttribute('aria-expanded')).toBe('true');
    expect(body().classList.contains('folded')).toBe(false);
    expect(within(body()).getByText('Arguments')).toBeTruthy();
    expect(body().textContent).toContain('line one\nline two');
    expect(summary()).toBeNull();
    await fireEvent.click(h);
    expect(folded()).toBe(true);
    expect(summary()).toBe('ok · line one');
  });

  it.each([
    ['error', 'Error: no such file: /tmp/x\n  at read()', 'error: no such file: /tmp/x'],
    ['timeout', 'The tool took longer than 30 s.', 'timed out: The tool took longer than 30 s.'],
    ['denied', 'You denied this call.', 'denied: You denied this call.'],
    ['cancelled', '', 'cancelled'],
  ] as const)('summarizes %s with the first line of what it said, and stays red', (status, output, expected) => {
    render(ToolCard, { props: { call: call(status, output), live: false } });
    expect(folded()).toBe(true);
    expect(summary()).toBe(expected);
    expect(screen.getByTestId('tool-card').classList.contains('failed')).toBe(true);
    expect(screen.getByTestId('tool-summary').classList.contains('bad')).toBe(true);
  });

  it('says a call cut off by the end of the answer was interrupted', () => {
    render(ToolCard, { props: { call: call('running', null), live: false } });
    expect(folded()).toBe(true);
    expect(summary()).toBe('interrupted before it finished');
  });

  it('keeps its images in the page and on screen when folded, and once when opened', async () => {
    const c = call('ok', '[image: image/png, 8 bytes]', { name: 'every__get-tiny-image', source: { kind: 'mcp', server: 'every' } });
    render(ToolCard, { props: { call: { ...c, result: c.result && { ...c.result, images: [png, png] } }, live: false } });
    expect(folded()).toBe(true);
    const card = screen.getByTestId('tool-card');
    const images = () => card.querySelectorAll('[data-testid="tool-images"] img');
    expect(images()).toHaveLength(2);
    // Not inside the folded body, nor inside the head button.
    for (const img of images()) {
      expect(img.closest('.folded.body, .body.folded')).toBeNull();
      expect(img.closest('button')).toBeNull();
    }
    expect(screen.getAllByRole('img')).toHaveLength(2);
    // The desktop end-to-end test's selector.
    expect(document.querySelector('[data-testid="tool-card"][data-tool-name="every__get-tiny-image"][data-status="ok"] [data-testid="tool-images"] img')).not.toBeNull();
    await fireEvent.click(head());
    expect(card.querySelectorAll('[data-testid="tool-images"]')).toHaveLength(1);
    expect(images()).toHaveLength(2);
  });
});

describe('a card still at work', () => {
  it('stays open while running and while waiting for approval, then folds when the result arrives', async () => {
    const view = render(ToolCard, { props: { call: call('running', null, { progress: ['asking the clock'] }), live: true } });
    expect(head().getAttribute('aria-expanded')).toBe('true');
    expect(summary()).toBeNull();
    expect(body().textContent).toContain('asking the clock');
    await view.rerender({ call: call('pending', null, { awaitingApproval: true }), live: true });
    expect(head().getAttribute('aria-expanded')).toBe('true');
    expect(head().textContent).toContain('Waiting for approval');
    await view.rerender({ call: call('ok', '{"time":"10:00"}'), live: true });
    expect(folded()).toBe(true);
    expect(summary()).toBe('ok · time: 10:00');
  });

  it('stays the way the person left it once they have opened or folded it', async () => {
    const view = render(ToolCard, { props: { call: call('running', null), live: true } });
    await fireEvent.click(head());
    expect(folded()).toBe(true);
    await fireEvent.click(head());
    expect(head().getAttribute('aria-expanded')).toBe('true');
    await view.rerender({ call: call('ok', 'done'), live: true });
    expect(head().getAttribute('aria-expanded')).toBe('true');
  });
});

describe('the summary line', () => {
  it('is short, one line, and reads JSON as key: value', () => {
    expect(summarizeOutput('  \n\nfirst   line\twith  gaps\nsecond')).toBe('first line with gaps');
    expect(summarizeOutput('[1,2,3]')).toBe('[3 items]');
    expect(summarizeOutput('"just a string"')).toBe('just a string');
    expect(summarizeOutput('{"a":{"b":1},"c":[1,2],"d":null}')).toBe('a: {…}, c: [2], d: null');
    expect(summarizeOutput('x'.repeat(500), 40)).toBe(`${'x'.repeat(39)}…`);
    expect(summarizeOutput('y'.repeat(1_000_000)).length).toBe(120);
    expect(toolSummary('ok', '')).toBe('ok · no output');
    expect(toolSummary('ok', '{"time":"12:00"}', { dryRun: true })).toBe('ok · example output · time: 12:00');
    expect(toolSummary('error', '{"error":"boom"}')).toBe('error: boom');
  });
});
