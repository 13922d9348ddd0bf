/**
 * Issue 29's pure parts: an elicitation schema becomes a form (every type the spec allows, with
 * defaults; anything else says why), values are checked and sent typed; the `/` menu filters and
 * moves; resource templates give their parameters and expand.
 */
import { describe, expect, it } from 'vitest';
import { contentOf, formFromSchema, initialValues, problems, type Field } from '../src/lib/mcp/schema';
import { APP_COMMANDS, entryName, expandTemplate, filterEntries, MAX_SHOWN, moveActive, slashQuery, templateParams, type MenuEntry } from '../src/lib/mcp/menu';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 2, maxLength: 5 },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    born: { type: 'string', format: 'date' },
    when: { type: 'string', format: 'date-time' },
    note: { type: 'string', default: 'hello' },
    age: { type: 'integer', minimum: 0, maximum: 150, default: 30 },
    ratio: { type: 'number', minimum: 0.5, maximum: 1.5 },
    ok: { type: 'boolean', default: true },
    off: { type: 'boolean' },
    size: { type: 'string', enum: ['s', 'm', 'l'], enumNames: ['Small', 'Medium', 'Large'], default: 'm' },
    colour: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }] },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2, default: ['a'] },
  },
  required: ['name', 'age', 'colour'],
};

function fields(): Field[] {
  const f = formFromSchema(SCHEMA);
  if (!f.ok) throw new Error(f.reason);
  return f.fields;
}

describe('an elicitation schema as a form', () => {
  it('makes one field per property, of each allowed type, with titles, bounds, choices and required marks', () => {
    const byName = Object.fromEntries(fields().map((f) => [f.name, f]));
    expect(Object.keys(byName)).toEqual(Object.keys(SCHEMA.properties));
    expect(byName.name).toMatchObject({ kind: 'string', label: 'Name', required: true, minLength: 2, maxLength: 5, format: null });
    expect(byName.email).toMatchObject({ kind: 'string', format: 'email', required: false, label: 'email' });
    expect(byName.site).toMatchObject({ format: 'uri' });
    expect(byName.born).toMatchObject({ format: 'date' });
    expect(byName.when).toMatchObject({ format: 'date-time' });
    expect(byName.age).toMatchObject({ kind: 'integer', minimum: 0, maximum: 150, default: 30, required: true });
    expect(byName.ratio).toMatchObject({ kind: 'number', minimum: 0.5, maximum: 1.5, default: null });
    expect(byName.ok).toMatchObject({ kind: 'boolean', default: true });
    expect(byName.size).toMatchObject({ kind: 'choice', default: 'm', choices: [{ value: 's', title: 'Small' }, { value: 'm', title: 'Medium' }, { value: 'l', title: 'Large' }] });
    expect(byName.colour).toMatchObject({ kind: 'choice', required: true, choices: [{ value: 'r', title: 'Red' }, { value: 'g', title: 'Green' }] });
    expect(byName.tags).toMatchObject({ kind: 'multi', minItems: 1, maxItems: 2, default: ['a'] });
  });

  it('starts from the defaults', () => {
    expect(initialValues(fields())).toEqual({ name: '', email: '', site: '', born: '', when: '', note: 'hello', age: '30', ratio: '', ok: true, off: false, size: 'm', colour: '', tags: ['a'] });
  });

  it('says what is wrong with each value, and nothing once it is right', () => {
    const f = fields();
    const bad = { ...initialValues(f), name: 'x', email: 'nope', site: 'not a url', born: '14/03/2026', age: '151', ratio: '2', tags: ['a', 'b', 'c'] };
    expect(problems(f, bad)).toEqual({
      name: 'At least 2 characters.',
      email: 'An e-mail address, like name@example.com.',
      site: 'A full address, like https://example.com/page.',
      born: 'A date, like 2026-03-14.',
      age: 'At most 150.',
      ratio: 'At most 1.5.',
      colour: 'Required.',
      tags: 'Choose at most 2.',
    });
    expect(problems(f, { ...bad, age: '2.5' }).age).toBe('A whole number.');
    const good = { ...initialValues(f), name: 'Ana', email: 'ana@example.com', site: 'https://example.com', born: '2026-03-14', colour: 'g' };
    expect(problems(f, good)).toEqual({});
  });

  it('sends typed values and leaves empty optional fields out', () => {
    const f = fields();
    const values = { ...initialValues(f), name: 'Ana', colour: 'g', ratio: '0.75', when: '2026-03-14T15:09:00Z' };
    expect(contentOf(f, values)).toEqual({ name: 'Ana', note: 'hello', age: 30, ratio: 0.75, when: '2026-03-14T15:09:00Z', ok: true, off: false, size: 'm', colour: 'g', tags: ['a'] });
  });

  it('refuses what the spec does not allow, saying which field and why', () => {
    const cases: [unknown, RegExp][] = [
      [{ type: 'object', properties: { address: { type: 'object', properties: {} } } }, /"address" is of type "object"/],
      [{ type: 'object', properties: { when: { type: 'string', format: 'ipv4' } } }, /"when" asks for the format "ipv4"/],
      [{ type: 'object', properties: { list: { type: 'array', items: { type: 'number' } } } }, /"list" is a list of something other than text choices/],
      [{ type: 'object', properties: { n: { type: 'string', enum: [1, 2] } } }, /"n": its choices are not all text/],
      [{ type: 'array' }, /something other than a set of fields/],
      [{ type: 'object', properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, { type: 'string' }])) }, /51 fields; at most 50/],
    ];
    for (const [schema, reason] of cases) {
      const f = formFromSchema(schema);
      expect(f.ok).toBe(false);
      if (!f.ok) expect(f.reason).toMatch(reason);
    }
  });
});

describe('the / menu', () => {
  const prompts: MenuEntry[] = [
    { kind: 'prompt', server: 'everything', prompt: { name: 'simple-prompt', description: 'A prompt without arguments', arguments: [] } },
    { kind: 'prompt', server: 'everything', prompt: { name: 'complex_prompt', title: 'Complex', description: 'With arguments', arguments: [{ name: 'temperature', required: true }] } },
    { kind: 'prompt', server: 'files', prompt: { name: 'review_code', description: 'Review a simple file', arguments: [] } },
  ];
  const all = [...APP_COMMANDS, ...prompts];

  it('opens only for a / at the start of an otherwise empty composer', () => {
    expect(slashQuery('/')).toBe('');
    expect(slashQuery('/sim')).toBe('sim');
    expect(slashQuery('/sim ple')).toBeNull();
    expect(slashQuery('a /sim')).toBeNull();
    expect(slashQuery('')).toBeNull();
  });

  it('shows everything for an empty query, the app first, then prompts in order', () => {
    expect(filterEntries(all, '').map(entryName)).toEqual(['new', 'compact', 'instructions', 'settings', 'shortcuts', 'everything:simple-prompt', 'everything:complex_prompt', 'files:review_code']);
  });

  it('puts names starting with the query first, then names or titles containing it, then descriptions', () => {
    expect(filterEntries(all, 'simple').map(entryName)).toEqual(['everything:simple-prompt', 'files:review_code']);
    expect(filterEntries(all, 'COMP').map(entryName)).toEqual(['compact', 'everything:complex_prompt']);
    expect(filterEntries(all, 'files').map(entryName)).toEqual(['files:review_code']);
    expect(filterEntries(all, 'zzz')).toEqual([]);
  });

  it('draws at most MAX_SHOWN entries', () => {
    const many: MenuEntry[] = Array.from({ length: 500 }, (_, i) => ({ kind: 'prompt', server: 's', prompt: { name: `p${i}`, arguments: [] } }));
    expect(filterEntries(many, 'p')).toHaveLength(MAX_SHOWN);
  });

  it('moves with the arrow, page and home/end keys, wrapping at the ends', () => {
    expect(moveActive(0, 5, 'ArrowDown')).toBe(1);
    expect(moveActive(4, 5, 'ArrowDown')).toBe(0);
    expect(moveActive(0, 5, 'ArrowUp')).toBe(4);
    expect(moveActive(2, 5, 'End')).toBe(4);
    expect(moveActive(3, 5, 'Home')).toBe(0);
    expect(moveActive(0, 20, 'PageDown')).toBe(8);
    expect(moveActive(0, 0, 'ArrowDown')).toBe(0);
  });
});

describe('resource templates', () => {
  it('name their parameters once each, in order', () => {
    expect(templateParams('test://static/resource/{id}')).toEqual(['id']);
    expect(templateParams('file:///{+path}{?rev,mode}{&rev}')).toEqual(['path', 'rev', 'mode']);
  });

  it('expand with the values, encoded as RFC 6570 says', () => {
    expect(expandTemplate('test://static/resource/{id}', { id: '7' })).toBe('test://static/resource/7');
    expect(expandTemplate('docs://{name}', { name: 'a b/c' })).toBe('docs://a%20b%2Fc');
    expect(expandTemplate('file:///{+path}', { path: 'a b/c' })).toBe('file:///a%20b/c');
    expect(expandTemplate('x://items{?q,page}', { q: 'cats', page: '' })).toBe('x://items?q=cats');
  });
});
