import { describe, expect, it } from 'vitest';
import { highlightCode, isHighlighted } from '../src/lib/markdown/highlight';
import { renderMarkdown } from '../src/lib/markdown/render';

function dom(md: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = renderMarkdown(md);
  return div;
}

describe('code highlighting with a common set of languages', () => {
  it.each([
    'bash', 'sh', 'shell', 'console', 'c', 'cpp', 'csharp', 'cs', 'css', 'diff', 'dockerfile', 'go', 'java', 'javascript', 'js',
    'jsx', 'json', 'kotlin', 'markdown', 'md', 'php', 'python', 'py', 'ruby', 'rust', 'rs', 'sql', 'swift', 'typescript', 'ts', 'tsx',
    'xml', 'html', 'svg', 'yaml', 'yml', 'toml', 'ini', 'makefile',
  ])('highlights %s', (lang) => {
    expect(isHighlighted(lang)).toBe(true);
  });

  it('highlights a closed fence in a known language', () => {
    const root = dom('```rust\nfn main() { let x = 1; }\n```');
    const pre = root.querySelector('pre');
    expect(pre?.classList.contains('hljs')).toBe(true);
    expect(root.querySelector('.hljs-keyword')?.textContent).toBe('fn');
    expect(root.querySelector('.code-lang')?.textContent).toBe('rust');
  });

  it.each(['haskell', 'cobol', 'brainfuck', 'text', 'no-such-language'])('renders %s as plain escaped code', (lang) => {
    expect(highlightCode('x', lang)).toBeNull();
    const root = dom(`\`\`\`${lang}\nmain = putStrLn "<b>hi</b>" & done\n\`\`\``);
    const pre = root.querySelector('pre');
    expect(pre?.classList.contains('hljs')).toBe(false);
    expect(root.querySelector('code')?.textContent).toBe('main = putStrLn "<b>hi</b>" & done\n');
    expect(root.querySelector('code b')).toBeNull();
    expect(root.querySelector('code span')).toBeNull();
  });
});
