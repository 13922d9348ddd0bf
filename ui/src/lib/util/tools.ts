/**
 * How tools show where there are many of them (the tray, Settings → Tools, the cards): a tool's
 * name split from its server's, the filter, a source's switch state, and what a card offers after
 * a call that did not run (a tool switched off in the chat, a key that is not set).
 *
 * The engine's wording is matched in one place here: `crates/core/src/machine/calls.rs` (switched
 * off) and the tools' `MissingSecret` messages (which name the Settings page that fixes them).
 */
import type { ToolInfo, ToolSource } from '../ipc/bindings';
import type { ToolCallModel } from '../model/message';

/** A tool's own name apart from its server's (`server__tool`) or the agent prefix (`agent__Name`). */
export function toolParts(name: string, source: ToolSource): { server: string | null; tool: string } {
  if (source.kind === 'mcp' && name.startsWith(`${source.server}__`)) return { server: source.server, tool: name.slice(source.server.length + 2) };
  if (source.kind === 'agent' && name.startsWith('agent__')) return { server: null, tool: name.slice('agent__'.length) };
  return { server: null, tool: name };
}

/** Whether a tool matches what was typed in a filter: every word, in its name, description or source. */
export function matchesFilter(t: ToolInfo, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const server = t.source.kind === 'mcp' ? t.source.server : t.source.kind === 'openApi' ? t.source.document : t.source.kind;
  const hay = `${t.name}\n${t.description}\n${server}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** A source's switch: every switchable tool on, none on, or some (shown as a mixed switch). */
export type SwitchState = 'on' | 'off' | 'mixed';

export function switchState(tools: readonly ToolInfo[], isOn: (t: ToolInfo) => boolean): SwitchState {
  let on = 0;
  for (const t of tools) if (isOn(t)) on++;
  return on === 0 ? 'off' : on === tools.length ? 'on' : 'mixed';
}

/** Whether the call was not run because its tool is switched off in this chat (the engine's answer). */
export function switchedOffInChat(call: Pick<ToolCallModel, 'name' | 'status' | 'result'>): boolean {
  return call.status === 'skipped' && (call.result?.output ?? '').startsWith(`${call.name} is switched off in this chat`);
}

/** Where a key the tool said it needs is added: the Settings page its message names. */
export function keyFix(call: Pick<ToolCallModel, 'status' | 'result'>): 'keys' | 'web' | null {
  if (call.status !== 'error') return null;
  const text = call.result?.output ?? '';
  if (!/\bneeds\b[^.]*\bkey\b/i.test(text)) return null;
  if (text.includes('Settings → Search & web tools')) return 'web';
  if (text.includes('Settings → Keys')) return 'keys';
  return null;
}

/** The start of the message an agent call sent its agent (its `message` argument), on one line. */
export function agentMessageStart(argumentsJson: string, max = 80): string {
  let message = '';
  try {
    const v: unknown = JSON.parse(argumentsJson);
    if (v && typeof v === 'object' && 'message' in v && typeof v.message === 'string') message = v.message;
  } catch {
    return '';
  }
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/** A Svelte action: a checkbox's mixed state is a property only (no attribute), set from a flag. */
export function mixed(el: HTMLInputElement, on: boolean): { update: (next: boolean) => void } {
  el.indeterminate = on;
  return {
    update(next: boolean) {
      el.indeterminate = next;
    },
  };
}
