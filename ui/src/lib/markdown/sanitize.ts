/**
 * The last pass over every piece of rendered Markdown: DOMPurify with a strict allow-list.
 * No scripts, event handlers, iframes, objects, forms, styles (except KaTeX's own layout, checked
 * declaration by declaration), no remote images, and links only to http(s)/mailto.
 */
import DOMPurify, { type Config } from 'dompurify';
import { blockedImageText, isAllowedUrl, isInlineImage } from './links';

const FORBID_TAGS = [
  'script', 'style', 'link', 'meta', 'base', 'title', 'template', 'noscript',
  'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'portal', 'fencedframe',
  'form', 'input', 'button', 'textarea', 'select', 'option', 'optgroup', 'datalist', 'output', 'fieldset', 'label',
  'audio', 'video', 'source', 'track', 'picture', 'canvas', 'dialog',
  'foreignobject', 'use', 'image', 'feimage', 'animate', 'animatemotion', 'animatetransform', 'set', 'mpath', 'handler', 'listener',
];

const FORBID_ATTR = [
  'target', 'srcset', 'action', 'formaction', 'form', 'ping', 'background', 'poster', 'xlink:href', 'xmlns:xlink',
  'id', 'name', 'autofocus', 'contenteditable', 'tabindex', 'accesskey', 'popover', 'popovertarget', 'is',
];

const CONFIG: Config = {
  USE_PROFILES: { html: true, svg: true, mathMl: true },
  FORBID_TAGS,
  FORBID_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  // DOMPurify checks every attribute value that is not URI-safe against this: values that do not
  // start with a scheme pass (lengths, SVG paths), and of the schemes only http(s) and mailto.
  // Links and image sources are then checked again by `isAllowedUrl` / `isInlineImage`.
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
  SAFE_FOR_TEMPLATES: false,
  WHOLE_DOCUMENT: false,
  RETURN_TRUSTED_TYPE: false,
};

/** KaTeX's inline layout: lengths, a few keywords and colors; nothing with parentheses (url(), expression()). */
const KATEX_DECLARATION =
  /^\s*(height|depth|width|min-width|max-width|vertical-align|top|bottom|left|right|margin-(?:left|right|top|bottom)|padding-(?:left|right|top|bottom)|border-(?:top|bottom|left|right)?-?width|border-style|border-color|position|color|background-color)\s*:\s*(-?(?:\d+\.?\d*|\.\d+)(?:em|ex|pt|px|%)?|#[0-9a-f]{3,8}|[a-z]+)\s*$/i;

/** True when every declaration of a style attribute is KaTeX-shaped layout. Exported for tests. */
export function isSafeMathStyle(style: string): boolean {
  const decls = style.split(';').filter((d) => d.trim() !== '');
  return decls.length > 0 && decls.every((d) => {
    const m = KATEX_DECLARATION.exec(d);
    if (!m) return false;
    const prop = (m[1] ?? '').toLowerCase();
    const value = (m[2] ?? '').toLowerCase();
    if (prop === 'position') return value === 'relative';
    return true;
  });
}

let purifier: ReturnType<typeof DOMPurify> | null = null;

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook('uponSanitizeAttribute', (node, data) => {
    if (data.attrName !== 'style') return;
    const el = node as Element;
    const inMath = typeof el.closest === 'function' && el.closest('.katex') !== null;
    if (inMath && isSafeMathStyle(data.attrValue)) data.forceKeepAttr = true;
    else data.keepAttr = false;
  });
  p.addHook('afterSanitizeAttributes', (node) => {
    const el = node as Element;
    const tag = el.nodeName.toLowerCase();
    if (tag === 'a') {
      const href = el.getAttribute('href');
      if (href !== null && isAllowedUrl(href)) {
        el.setAttribute('rel', 'noopener noreferrer');
        el.setAttribute('title', href);
      } else {
        el.removeAttribute('href');
      }
      el.removeAttribute('target');
    } else if (tag === 'img') {
      const src = el.getAttribute('src');
      if (!isInlineImage(src)) {
        const span = el.ownerDocument.createElement('span');
        span.className = 'image-blocked';
        span.title = 'Remote images are not loaded';
        span.textContent = blockedImageText(el.getAttribute('alt') ?? '', src ?? '');
        el.replaceWith(span);
      }
    }
    // Any other element that carries a URL attribute must also pass the allow-list.
    for (const attr of ['src', 'href']) {
      if (tag !== 'a' && tag !== 'img' && el.hasAttribute(attr) && !isAllowedUrl(el.getAttribute(attr))) el.removeAttribute(attr);
    }
  });
  // Set once: a config passed to each `sanitize` call is parsed again on every call (all the tag and
  // attribute allow-lists rebuilt), about two thirds of the sanitizer's time in the webview.
  p.setConfig(CONFIG);
  purifier = p;
  return p;
}

/** Sanitizes an HTML fragment produced by the Markdown renderer. */
export function sanitizeHtml(html: string): string {
  return getPurifier().sanitize(html) as string;
}
