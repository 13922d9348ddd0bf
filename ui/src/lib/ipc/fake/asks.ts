/**
 * A server asking during a call, in the fake: a question naming "form" or "elicit" runs a call of
 * the `files` server that asks for a form (one of each field type, with defaults), "url" in it
 * the URL mode; "sample" or "sampling" runs one that asks for a model completion, which streams
 * into the card as a nested run once approved. The turn waits for the answer as the service does.
 */
import type { ChatEvent } from '../bindings';
import type { AskEvent, ElicitationAction, FormField, SamplingMessage } from '../../mcp/types';
import { ANSWER } from './golden';
import { ipcError } from './errors';
import type { FakeState } from './state';

/** An answer the fake turn waits for. */
export type AskAnswer = { kind: 'elicitation'; action: ElicitationAction; content: Record<string, unknown> | null } | { kind: 'sampling'; approve: boolean; messages: SamplingMessage[] | null };

/** The form the fake server asks for, as the engine reads it from the requested schema. */
export const FAKE_FORM_FIELDS: FormField[] = [
  { name: 'name', title: 'Your name', description: 'How the note is signed', required: true, kind: { type: 'text', minLength: 1, maxLength: 50 } },
  { name: 'email', title: 'E-mail', required: false, kind: { type: 'text', format: 'email' } },
  { name: 'copies', title: 'Copies', required: true, kind: { type: 'number', integer: true, minimum: 1, maximum: 10, default: 2 } },
  { name: 'urgent', title: 'Urgent', required: false, kind: { type: 'boolean', default: false } },
  {
    name: 'colour',
    title: 'Colour',
    required: false,
    kind: { type: 'choice', multiple: false, choices: [{ value: 'red', title: 'Red' }, { value: 'green', title: 'Green' }, { value: 'blue', title: 'Blue' }], default: ['green'] },
  },
];

const SAMPLE_TEXT = 'A short poem about the sea: waves fold into waves, and the shore keeps count.';

/** The events of a turn whose call asks the person (none when the question asks for nothing). */
export function askScript(text: string): (ChatEvent | AskEvent)[] | null {
  const form = /\b(form|elicit\w*)\b/i.test(text);
  const url = /\burl\b/i.test(text) && form;
  const sample = /\bsampl(e|ing)\b/i.test(text);
  if (!form && !sample) return null;
  const call = ANSWER.events.find((e) => e.type === 'toolCall');
  if (!call || call.type !== 'toolCall') return null;
  const tool = sample ? 'summarise' : 'write_note';
  const events: (ChatEvent | AskEvent)[] = [];
  for (const e of ANSWER.events) {
    if (e.type === 'toolCall') {
      events.push({ ...e, name: `files__${tool}`, source: { kind: 'mcp', server: 'files' }, arguments: sample ? '{"topic":"the sea"}' : '{"title":"Shopping"}' });
    } else if (e.type === 'toolStarted') {
      events.push(e);
      if (sample) {
        events.push({
          type: 'samplingRequested',
          requestId: 'ask-1',
          callId: call.id,
          server: 'files',
          tool: `files__${tool}`,
          messages: [{ role: 'user', text: 'Write a short poem about the sea.' }],
          systemPrompt: 'You are a poet.',
          maxTokens: 4096,
          requestedMaxTokens: 1_000_000,
        });
      } else {
        events.push({
          type: 'elicitationRequested',
          requestId: 'ask-1',
          callId: call.id,
          server: 'files',
          tool: `files__${tool}`,
          message: url ? 'Sign in to the notes service to go on.' : 'Who is the note from?',
          mode: url ? 'url' : 'form',
          ...(url ? { url: 'https://notes.example.com/authorize?client=switchboard', fields: [] } : { fields: FAKE_FORM_FIELDS }),
        });
      }
    } else if (e.type === 'toolResult') {
      events.push({ ...e, output: sample ? SAMPLE_TEXT : 'Saved the note.' });
    } else {
      events.push(e);
    }
  }
  return events;
}

/** What follows an answer: the resolution, and a sampling's nested completion when approved. */
export function afterAsk(e: Extract<AskEvent, { type: 'elicitationRequested' | 'samplingRequested' }>, answer: AskAnswer | null): (ChatEvent | AskEvent)[] {
  if (e.type === 'elicitationRequested') {
    return [{ type: 'elicitationResolved', callId: e.callId, requestId: e.requestId, action: answer?.kind === 'elicitation' ? answer.action : 'cancel' }];
  }
  const approved = answer?.kind === 'sampling' && answer.approve;
  const out: (ChatEvent | AskEvent)[] = [{ type: 'samplingResolved', callId: e.callId, requestId: e.requestId, approved }];
  if (!approved) return out;
  const instance = 'sampling';
  const zero = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 };
  const nested: ChatEvent[] = [
    { type: 'started', conversationId: '', messageId: `${e.requestId}-run`, userMessageId: '', provider: 'openai', model: 'gpt-4o-mini' },
    ...SAMPLE_TEXT.split(/(?<=, )|(?<=: )/).map((text): ChatEvent => ({ type: 'textDelta', text })),
    { type: 'done', finishReason: 'stop', toolCallsMade: 0, usage: { ...zero, promptTokens: 24, completionTokens: 18 } },
  ];
  return [...out, ...nested.map((event): ChatEvent => ({ type: 'toolProgress', id: e.callId, instance, event }))];
}

/** The commands that answer a server's questions, as the shell's do. */
export function askCommands(st: FakeState) {
  const find = (id: string) => [...st.running.values()].find((t) => t.askingId === id);
  return {
    async answerElicitation(id: string, action: ElicitationAction, content: Record<string, unknown> | null = null): Promise<void> {
      const t = find(id);
      if (!t) throw ipcError('approvalNotPending', { callId: id });
      t.wakeAsk?.({ kind: 'elicitation', action, content });
    },
    async answerSampling(id: string, approve: boolean, messages: SamplingMessage[] | null = null): Promise<void> {
      const t = find(id);
      if (!t) throw ipcError('approvalNotPending', { callId: id });
      t.wakeAsk?.({ kind: 'sampling', approve, messages });
    },
  };
}
