/** Agents and toolsets (agents.json) in the fake: two agents and a toolset to start with. */
import type { Backend } from '../backend';
import type { AgentConfig, AgentsOverview } from '../bindings';
import { AGENT_NAME_RE } from '../../util/agentNames';
import { ipcError } from './errors';
import { profileMissing } from './providers';
import type { FakeState } from './state';
import { toolsetEntry } from './tools';

/** The agents file every fake starts with. */
export function agentsSeed(): FakeState['agentsFile'] {
  return {
    toolsets: [{ name: 'research', description: 'Looking things up', tools: ['web_fetch', 'get_time', 'agent:Scout'] }],
    agents: [
      { name: 'Scout', description: 'Finds sources for one question.', instructions: 'Find two good sources and quote them.', profile: 'openai', model: 'gpt-4o-mini' },
      { name: 'Researcher', description: 'Answers with sources, asking Scout for help.', instructions: 'Split the question, ask Scout for each part, then answer with sources.', profile: 'openai', toolsets: ['research'], maxIterations: 8 },
    ],
  };
}

function agentsOverview(st: FakeState): AgentsOverview {
  const { agentsFile, profiles } = st;
  const toolsets = agentsFile.toolsets.map((t) => {
    const tools: string[] = [];
    const missing: string[] = [];
    for (const entry of t.tools) {
      const got = toolsetEntry(st, entry);
      if (typeof got === 'string') missing.push(`'${entry}' names nothing now: ${got}`);
      else tools.push(...got);
    }
    return { toolset: structuredClone(t), tools, missing };
  });
  const agents = agentsFile.agents.map((a) => {
    const problems: string[] = [];
    if (a.profile && !profiles.some((p) => p.name === a.profile)) problems.push(`There is no provider profile named '${a.profile}'.`);
    for (const ts of a.toolsets ?? []) {
      const found = toolsets.find((t) => t.toolset.name === ts);
      if (!found) problems.push(`The toolset '${ts}' no longer exists; its tools are left out.`);
      else problems.push(...found.missing.map((m) => `The toolset '${ts}' names ${m.replace(' names nothing now:', ':')} It is left out.`));
    }
    return { config: structuredClone(a), toolName: `agent__${a.name}`, problems };
  });
  return { configPath: '/home/you/.config/switchboard/agents.json', problem: null, agents, toolsets };
}

/** Like the service's check of an agent, in its words. */
function checkAgent(st: FakeState, a: AgentConfig): void {
  if (!AGENT_NAME_RE.test(a.name)) throw ipcError('agentName', { name: a.name });
  if (a.maxIterations !== undefined && (a.maxIterations < 1 || a.maxIterations > 50)) throw ipcError('agentSteps', { name: a.name, steps: a.maxIterations });
  if (a.takesControl && a.exclusive) throw ipcError('agentControlAndExclusive', { name: a.name });
  const unknown = (a.toolsets ?? []).find((t) => !st.agentsFile.toolsets.some((x) => x.name === t));
  if (unknown) throw ipcError('agentToolset', { toolset: unknown });
  if (a.profile && !st.profiles.some((p) => p.name === a.profile)) throw profileMissing(st, a.profile);
}

export function agentCommands(st: FakeState): Pick<Backend, 'agents' | 'putAgent' | 'duplicateAgent' | 'removeAgent' | 'putToolset' | 'removeToolset'> {
  const { agentsFile } = st;
  return {
    async agents() {
      return agentsOverview(st);
    },
    async putAgent(agent) {
      checkAgent(st, agent);
      const i = agentsFile.agents.findIndex((a) => a.name === agent.name);
      if (i >= 0) agentsFile.agents[i] = structuredClone(agent);
      else agentsFile.agents.push(structuredClone(agent));
      return agentsOverview(st);
    },
    async duplicateAgent(name, newName) {
      const a = agentsFile.agents.find((x) => x.name === name);
      if (!a) throw ipcError('duplicateAgentNotFound', { name });
      if (agentsFile.agents.some((x) => x.name === newName)) throw ipcError('duplicateAgentExists', { name: newName });
      const copy = { ...structuredClone(a), name: newName };
      checkAgent(st, copy);
      agentsFile.agents.push(copy);
      return agentsOverview(st);
    },
    async removeAgent(name) {
      const i = agentsFile.agents.findIndex((a) => a.name === name);
      if (i < 0) throw ipcError('agentNotFound', { name });
      agentsFile.agents.splice(i, 1);
      return agentsOverview(st);
    },
    async putToolset(toolset) {
      if (!AGENT_NAME_RE.test(toolset.name)) throw ipcError('toolsetName', { name: toolset.name });
      if (toolset.tools.some((t) => t.trim() === '')) throw ipcError('toolsetEmptyEntry', { name: toolset.name });
      const i = agentsFile.toolsets.findIndex((t) => t.name === toolset.name);
      if (i >= 0) agentsFile.toolsets[i] = structuredClone(toolset);
      else agentsFile.toolsets.push(structuredClone(toolset));
      return agentsOverview(st);
    },
    async removeToolset(name) {
      const i = agentsFile.toolsets.findIndex((t) => t.name === name);
      if (i < 0) throw ipcError('toolsetNotFound', { name });
      const user = agentsFile.agents.find((a) => (a.toolsets ?? []).includes(name));
      if (user) throw ipcError('toolsetInUse', { agent: user.name, name });
      agentsFile.toolsets.splice(i, 1);
      return agentsOverview(st);
    },
  };
}
