import { describe, expect, it } from 'vitest';
import type { ToolInfo, ToolSource } from '../ipc/bindings';
import { annotationTags, buildServerConfig, emptyServerForm, groupTools, parseArgs, parseEnv, parseHeaders } from './mcp';

describe('the add form’s fields', () => {
  it('keeps arguments exactly, one per line', () => {
    expect(parseArgs('-y\r\n  two words \n\n"quoted"\n')).toEqual(['-y', '  two words ', '"quoted"']);
  });

  it('reads KEY=VALUE and Name: value lines, and names a bad line', () => {
    expect(parseEnv('A=1\nB==x=\n\nC=')).toEqual({ A: '1', B: '=x=', C: '' });
    expect(() => parseEnv('A=1\nnot a pair')).toThrow('Line 2');
    expect(() => parseEnv('A=1\nA=2')).toThrow('A is set twice');
    expect(parseHeaders('Authorization: Bearer a:b\nX-Y:z')).toEqual({ Authorization: 'Bearer a:b', 'X-Y': 'z' });
    expect(() => parseHeaders('x-y: 1\nX-Y: 2')).toThrow('Line 2');
  });

  it('builds a config for a local or a remote server, or says what is missing', () => {
    const f = { ...emptyServerForm(), name: 'a', command: 'srv', cwd: ' /tmp ' };
    expect(buildServerConfig(f)).toEqual({ config: { type: 'stdio', command: 'srv', args: [], env: {}, cwd: '/tmp', timeout: null } });
    expect(buildServerConfig({ ...f, name: ' ', command: '', timeout: '1.5' })).toEqual({
      errors: { name: 'Give the server a name.', command: 'Enter the program to run.', timeout: 'A whole number of seconds, 1 or more.' },
    });
    expect(buildServerConfig({ ...f, kind: 'remote', url: 'http://h:1/mcp' })).toEqual({ config: { type: 'http', url: 'http://h:1/mcp', headers: {}, timeout: null } });
  });
});

describe('tool hints and groups', () => {
  it('shows only the hints that are set', () => {
    expect(annotationTags({ readOnlyHint: true, destructiveHint: false, openWorldHint: true, title: 'x' }).map((t) => t.label)).toEqual(['read-only', 'open-world']);
    expect(annotationTags(null)).toEqual([]);
  });

  it('puts built-in tools first, MCP servers by name next, other kinds last', () => {
    const t = (name: string, source: ToolSource) => ({ name, source }) as ToolInfo;
    const groups = groupTools([
      t('w', { kind: 'http' }),
      t('z__a', { kind: 'mcp', server: 'z' }),
      t('b', { kind: 'builtin' }),
      t('a__x', { kind: 'mcp', server: 'a' }),
      t('z__b', { kind: 'mcp', server: 'z' }),
    ]);
    expect(groups.map((g) => [g.label, g.tools.map((x) => x.name)])).toEqual([
      ['Built-in', ['b']],
      ['a', ['a__x']],
      ['z', ['z__a', 'z__b']],
      ['HTTP', ['w']],
    ]);
  });
});
