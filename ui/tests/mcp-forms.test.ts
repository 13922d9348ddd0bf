/**
 * Issue 29's pure parts: an elicitation schema becomes a form (every type the spec allows, with
 * defaults; anything else says why), values are checked and sent typed; the `/` menu filters and
 * moves; resource templates give their parameters and expand.
 */
import { describe, expect, it } from 'vitest';
import { contentOf, fieldsOf, initialValues, problems, type Field } from '../src/lib/mcp/schema';
import type { FormField } from '../src/lib/mcp/types';
import { APP_COMMANDS, entryName, expandTemplate, filterEntries, MAX_SHOWN, moveActive, slashQuery, templateParams, type MenuEntry } from '../src/lib/mcp/menu';

/** One field of every kind the engine reads from a requested schema (the spec's types), with and without defaults. */
const FORM: FormField[] = [
  { name: 'name', title: 'Name', required: true, kind: { type: 'text', minLength: 2, maxLength: 5 } },
  { name: 'email', title: '', required: false, kind: { type: 'text', format: 'email' } },
  { name: 'site', title: 'Site', required: false, kind: { type: 'text', format: 'uri' } },
  { name: 'born', title: 'Born', required: false, kind: { type: 'text', format: 'date' } },
  { name: 'when', title: 'When', required: false, kind: { type: 'text', format: 'date-time' } },
  { name: 'odd', title: 'Odd', required: false, kind: { type: 'text', format: 'ipv4' } },
  { name: 'note', title: 'Note', description: 'Anything', required: false, kind: { type: 'text', default: 'hello' } },
  { name: 'age', title: 'Age', required: true, kind: { type: 'number', integer: true, minimum: 0, maximum: 150, default: 30 } },
  { name: 'ratio', title: 'Ratio', required: false, kind: { type: 'number', integer: false, minimum: 0.5, maximum: 1.5 } },
  { name: 'ok', title: 'OK', required: false, kind: { type: 'boolean', default: true } },
  { name: 'off', title: 'Off', required: false, kind: { type: 'boolean' } },
  { name: 'size', title: 'Size', required: false, kind: { type: 'choice', multiple: false, choices: [{ value: 's', title: 'Small' }, { value: 'm', title: 'Medium' }], default: ['m'] } },
  { name: 'colour', title: 'Colour', required: true, kind: { type: 'choice', multiple: false, choices: [{ value: 'r', title: 'Red' }, { value: 'g', title: 'Green' }], default: [] } },
  { name: 'tags', title: 'Tags', required: false, kind: { type: 'choice', multiple: true, choices: ['a', 'b', 'c'].map((v) => ({ value: v, title: v.toUpperCase() })), minItems: 1, maxItems: 2, default: ['a'] } },
];

function fields(): Field[] {
  return fieldsOf(FORM);
}

describe('an elicitation form', () => {
  it('draws one field per property, of each allowed type, with labels, bounds, choices and required marks', () => {
    const byName = Object.fromEntries(fields().map((f) => [f.name, f]));
    expect(Object.keys(byName)).toEqual(FORM.map((f) => f.name));
    expect(byName.name).toMatchObject({ kind: 'string', label: 'Name', required: true, minLength: 2, maxLength: 5, format: null });
    expect(byName.email).toMatchObject({ kind: 'string', format: 'email', required: false, label: 'email' });
    expect(byName.site).toMatchObject({ format: 'uri' });
    expect(byName.born).toMatchObject({ format: 'date' });
    expect(byName.when).toMatchObject({ format: 'date-time' });
    expect(byName.odd).toMatchObject({ kind: 'string', format: null });
    expect(byName.note).toMatchObject({ description: 'Anything', default: 'hello' });
    expect(byName.age).toMatchObject({ kind: 'integer', minimum: 0, maximum: 150, default: 30, required: true });
    expect(byName.ratio).toMatchObject({ kind: 'number', minimum: 0.5, maximum: 1.5, default: null });
    expect(byName.ok).toMatchObject({ kind: 'boolean', default: true });
    expect(byName.size).toMatchObject({ kind: 'choice', default: 'm', choices: [{ value: 's', title: 'Small' }, { value: 'm', title: 'Medium' }] });
    expect(byName.colour).toMatchObject({ kind: 'choice', required: true, default: null });
    expect(byName.tags).toMatchObject({ kind: 'multi', minItems: 1, maxItems: 2, default: ['a'] });
  });

  it('starts from the defaults', () => {
    expect(initialValues(fields())).toEqual({ name: '', email: '', site: '', born: '', when: '', odd: '', note: 'hello', age: '30', ratio: '', ok: true, off: false, size: 'm', colour: '', tags: ['a'] });
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
    expect(problems(f, { ...bad, age: 'ten' }).age).toBe('A number.');
    const good = { ...initialValues(f), name: 'Ana', email: 'ana@example.com', site: 'https://example.com', born: '2026-03-14', colour: 'g' };
    expect(problems(f, good)).toEqual({});
  });

  it('sends typed values and leaves empty optional fields out', () => {
    const f = fields();
    const values = { ...initialValues(f), name: 'Ana', colour: 'g', ratio: '0.75', when: '2026-03-14T15:09:00Z' };
    expect(contentOf(f, values)).toEqual({ name: 'Ana', note: 'hello', age: 30, ratio: 0.75, when: '2026-03-14T15:09:00Z', ok: true, off: false, size: 'm', colour: 'g', tags: ['a'] });
  });
});

describe('the / menu', () => {
  const prompts: MenuEntry[] = [
    { kind: 'prompt', server: 'everything', prompt: { name: 'simple-prompt', title: null, description: 'A prompt without arguments', arguments: [] } },
    { kind: 'prompt', server: 'everything', prompt: { name: 'complex_prompt', title: 'Complex', description: 'With arguments', arguments: [{ name: 'temperature', title: null, description: null, required: true }] } },
    { kind: 'prompt', server: 'files', prompt: { name: 'review_code', title: null, description: 'Review a simple file', arguments: [] } },
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
    const many: MenuEntry[] = Array.from({ length: 500 }, (_, i) => ({ kind: 'prompt', server: 's', prompt: { name: `p${i}`, title: null, description: null, arguments: [] } }));
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
