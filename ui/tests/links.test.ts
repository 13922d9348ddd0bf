import { describe, expect, it } from 'vitest';
import { isAllowedUrl, isInlineImage } from '../src/lib/markdown/links';

describe('isAllowedUrl: the single allow-list for links', () => {
  it.each([
    'https://example.com',
    'http://example.com/path?q=1#frag',
    'HTTPS://EXAMPLE.COM/',
    'mailto:someone@example.com',
    '  https://example.com  ',
  ])('allows %s', (href) => {
    expect(isAllowedUrl(href)).toBe(true);
  });

  it.each([
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    '\u0001javascript:alert(1)',
    ' javascript:alert(1)',
    '&#106;avascript:alert(1)',
    '&#x6A;avascript:alert(1)',
    'javascript&colon;alert(1)',
    'javascript%3Aalert(1)',
    'vbscript:msgbox(1)',
    'data:text/html,<script>alert(1)</script>',
    'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
    'file:///etc/passwd',
    'blob:https://example.com/uuid',
    'tauri://localhost/index.html',
    'ipc://localhost/cmd',
    '/relative/path',
    '//example.com/protocol-relative',
    '#fragment',
    'example.com',
    'https://user:pass@example.com/',
    'http://',
    '',
    null,
    undefined,
  ])('rejects %j', (href) => {
    expect(isAllowedUrl(href)).toBe(false);
  });
});

describe('isInlineImage', () => {
  it('accepts only base64 raster data URIs', () => {
    expect(isInlineImage('data:image/png;base64,iVBORw0KGgo=')).toBe(true);
    expect(isInlineImage('data:image/svg+xml;base64,PHN2Zz4=')).toBe(false);
    expect(isInlineImage('https://evil.example/a.png')).toBe(false);
    expect(isInlineImage('data:text/html,hi')).toBe(false);
  });
});
