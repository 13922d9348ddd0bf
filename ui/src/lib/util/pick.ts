/**
 * "Pick, don't type": the options of a name picker (what exists: tools, whole sources, agents,
 * models), the search over them, and the chosen names with those that no longer exist marked.
 */
import type { ToolInfo } from '../ipc/bindings';

export interface PickOption {
  name: string;
  /** A few words on what it is ("MCP server", the tool's source...). */
  detail?: string;
}

export interface ChosenRow extends PickOption {
  /** It is not among the options any more (uninstalled, removed, renamed). */
  missing: boolean;
}

/** The chosen names in their order, each with its option's detail, or marked missing. */
export function chosenRows(chosen: readonly string[], options: readonly PickOption[]): ChosenRow[] {
  return chosen.map((name) => {
    const o = options.find((x) => x.name === name);
    return o ? { ...o, missing: false } : { name, missing: true };
  });
}

/** The options not chosen yet whose name (or detail) contains every word of `query`, names starting with it first. */
export function matchOptions(options: readonly PickOption[], query: string, chosen: readonly string[] = []): PickOption[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const q = words.join(' ');
  const hits = options.filter((o) => !chosen.includes(o.name) && words.every((w) => `${o.name} ${o.detail ?? ''}`.toLowerCase().includes(w)));
  return q ? [...hits.filter((o) => o.name.toLowerCase().startsWith(q)), ...hits.filter((o) => !o.name.toLowerCase().startsWith(q))] : hits;
}

/** What a toolset can hold: every tool now, every whole source (`mcp:server`, `builtin`, ...), every agent (`agent:Name`). */
export function toolsetOptions(tools: readonly ToolInfo[], agents: readonly string[]): PickOption[] {
  const sources = new Map<string, string>();
  for (const t of tools) {
    const s = t.source;
    if (s.kind === 'builtin') sources.set('builtin', 'every built-in tool');
    else if (s.kind === 'mcp') sources.set(`mcp:${s.server}`, 'every tool of this MCP server');
    else if (s.kind === 'openApi') sources.set(`openapi:${s.document}`, 'every operation of this document');
  }
  return [
    ...tools.filter((t) => t.source.kind !== 'agent').map((t) => ({ name: t.name, detail: t.description.split('\n')[0]?.slice(0, 80) ?? '' })),
    ...[...sources].map(([name, detail]) => ({ name, detail })),
    ...agents.map((a) => ({ name: `agent:${a}`, detail: 'another agent' })),
  ];
}
