/** The tools every fake starts with: the built-in ones and a few of other kinds. */
import type { ToolInfo, ToolSource } from '../bindings';

export function tool(name: string, description: string, source: ToolSource, more: Partial<ToolInfo> = {}): ToolInfo {
  return { name, description, source, enabled: true, disabledForChat: false, approval: 'auto', exclusive: false, takesControl: false, parameters: {}, findings: [], ...more };
}

export const BUILTIN_TOOLS: ToolInfo[] = [
  tool('get_time', 'Current date and time in an IANA time zone (UTC by default).', { kind: 'builtin' }),
  tool('web_fetch', 'Fetches a web page and returns its readable text.', { kind: 'builtin' }, { approval: 'ask' }),
];

export const OTHER_TOOLS: ToolInfo[] = [
  tool('weather', 'Current weather for a city (HTTP API tool).', { kind: 'http' }),
  tool('shell', 'Runs a shell command. Disabled in settings.', { kind: 'builtin' }, { enabled: false, approval: 'ask' }),
];
