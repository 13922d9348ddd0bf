/**
 * Which tools the fake offers: built-in ones, the running MCP servers' and the defined ones; what
 * a toolset entry gives; and a chat's tools (an agent's chat has the agent's).
 */
import type { Backend } from '../backend';
import type { AgentConfig, ToolInfo } from '../bindings';
import { BUILTIN_TOOLS, OTHER_TOOLS, tool } from './catalog';
import { conversation } from './conversations';
import { definedTools } from './defined';
import { mcpTools } from './mcp';
import type { FakeState } from './state';

export function allTools(st: FakeState): ToolInfo[] {
  return [...BUILTIN_TOOLS, ...mcpTools(st), ...OTHER_TOOLS, ...definedTools(st)];
}

/** Like the service: what a toolset entry gives now, or why it gives nothing. */
export function toolsetEntry(st: FakeState, entry: string): string[] | string {
  if (entry.startsWith('agent:')) {
    const name = entry.slice('agent:'.length);
    return st.agentsFile.agents.some((a) => a.name === name) ? [`agent__${name}`] : `there is no agent named '${name}'.`;
  }
  const tools = allTools(st);
  if (entry.startsWith('mcp:')) {
    const server = entry.slice('mcp:'.length);
    const names = tools.filter((t) => t.source.kind === 'mcp' && t.source.server === server).map((t) => t.name);
    return names.length > 0 ? names : `the MCP server '${server}' has no tools now (not added, not approved, or not running).`;
  }
  if (entry === 'builtin') return tools.filter((t) => t.source.kind === 'builtin').map((t) => t.name);
  return tools.some((t) => t.name === entry) ? [entry] : 'no tool has this name now.';
}

export function agentToolList(st: FakeState, agent: AgentConfig): ToolInfo[] {
  const all = allTools(st);
  const names = (agent.toolsets ?? []).flatMap((ts) => st.agentsFile.toolsets.find((t) => t.name === ts)?.tools ?? []).flatMap((entry) => {
    const got = toolsetEntry(st, entry);
    return typeof got === 'string' ? [] : got;
  });
  return [...new Set(names)].map((name) => {
    const known = all.find((t) => t.name === name);
    if (known) return { ...known, approval: agent.approval?.[name] ?? known.approval };
    const other = st.agentsFile.agents.find((a) => `agent__${a.name}` === name);
    return tool(name, other?.description ?? '', { kind: 'agent' }, other?.exclusive ? { exclusive: true } : {});
  });
}

/** Like the service: a chat with an agent (or a new one with `agent` picked) has the agent's tools. */
export function toolsFor(st: FakeState, cid: string | null, picked: string | null = null): ToolInfo[] {
  const conv = cid ? st.conversations.get(cid) : undefined;
  const agent = st.agentsFile.agents.find((a) => a.name === (conv ? conv.agent : picked));
  const tools = agent ? agentToolList(st, agent) : allTools(st);
  return tools.map((t) => ({
    ...t,
    enabled: !st.settings.tools.disabled.includes(t.name),
    approval: st.settings.tools.approval[t.name] ?? t.approval,
    disabledForChat: conv?.disabled.has(t.name) ?? false,
  }));
}


export function toolCommands(st: FakeState): Pick<Backend, 'listTools' | 'setChatToolDisabled' | 'setChatToolsDisabled'> {
  return {
    async listTools(cid = null, agent = null) {
      return toolsFor(st, cid, agent);
    },
    async setChatToolDisabled(cid, name, disabled) {
      // Like the service: any name is kept, also one no tool has now.
      const c = conversation(st, cid);
      if (disabled) c.disabled.add(name);
      else c.disabled.delete(name);
    },
    async setChatToolsDisabled(cid, names, disabled) {
      const c = conversation(st, cid);
      for (const name of names) {
        if (disabled) c.disabled.add(name);
        else c.disabled.delete(name);
      }
    },
  };
}
