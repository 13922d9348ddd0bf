/** Images a tool returned: kept on the call as its result arrives, and shown on the card. */
import { render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ToolCard from '../src/lib/components/ToolCard.svelte';
import type { ChatEvent, ToolImage } from '../src/lib/ipc/bindings';
import { pendingAssistant, reduceAll, type ToolCallModel } from '../src/lib/model/message';
import { imageSrc } from '../src/lib/util/format';

const png: ToolImage = { mimeType: 'image/png', data: 'iVBORw0KGgo=' };

const call = (images?: ToolImage[]): ToolCallModel => ({
  id: 'c1',
  name: 'every__get-tiny-image',
  source: { kind: 'mcp', server: 'every' },
  arguments: '{}',
  textOffset: 0,
  iteration: 1,
  index: 0,
  status: 'ok',
  result: { status: 'ok', output: '[image: image/png, 8 bytes]', durationMs: 3, ...(images ? { images } : {}) },
  progress: [],
  awaitingApproval: false,
  runs: [],
});

describe('tool images', () => {
  it('a toolResult event keeps its images on the call', () => {
    const events: ChatEvent[] = [
      { type: 'started', conversationId: 'c', messageId: 'm2', userMessageId: 'm1', provider: 'p', model: 'x' },
      { type: 'toolCall', id: 'c1', name: 'every__get-tiny-image', source: { kind: 'mcp', server: 'every' }, arguments: '{}', textOffset: 0, iteration: 1, index: 0 },
      { type: 'toolResult', id: 'c1', status: 'ok', output: '[image]', durationMs: 2, images: [png] },
    ];
    const m = reduceAll(pendingAssistant(), events);
    expect(m.toolCalls[0]?.result?.images).toEqual([png]);
  });

  it('the card shows each image from a data URL, and names the server', () => {
    render(ToolCard, { props: { call: call([png, png]), live: false } });
    const imgs = screen.getAllByRole('img');
    expect(imgs).toHaveLength(2);
    expect(imgs[0]?.getAttribute('src')).toBe('data:image/png;base64,iVBORw0KGgo=');
    expect(imgs[0]?.getAttribute('alt')).toBe('Image 1 returned by every__get-tiny-image');
    expect(screen.getByText('MCP: every')).toBeTruthy();
  });

  it('a card without images shows none, and odd images are never turned into URLs', () => {
    render(ToolCard, { props: { call: call(), live: false } });
    expect(screen.queryByTestId('tool-images')).toBeNull();
    expect(imageSrc({ mimeType: 'image/svg+xml', data: 'PHN2Zz4=' })).toBeNull();
    expect(imageSrc({ mimeType: 'image/png', data: 'AA"><script>' })).toBeNull();
    expect(imageSrc(png)).toBe('data:image/png;base64,iVBORw0KGgo=');
  });
});
