/**
 * The one place that decides which link targets the app will open. Everything that can leave the
 * webview (rendered links, the opener plugin) asks `isAllowedUrl` first.
 */

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

/**
 * True for absolute http(s) URLs with a host and for mailto: addresses; false for everything else:
 * relative links (they would navigate the app's own webview), javascript:, vbscript:, data:, file:,
 * blob:, custom schemes, and obfuscated forms of them (mixed case, embedded tabs or newlines,
 * leading control characters), which the WHATWG URL parser normalizes before we compare.
 */
export function isAllowedUrl(href: string | null | undefined): boolean {
  if (typeof href !== 'string') return false;
  const raw = href.trim();
  if (raw === '' || raw.length > 8192) return false;
  // Entity-encoded or percent-encoded schemes are never decoded into a scheme by the URL parser,
  // but reject anything that still looks like an encoded scheme separator for good measure.
  if (/^[^:/?#]*(&#|&[a-z]+;|%3a)/i.test(raw)) return false;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) return false;
  if (url.protocol === 'mailto:') return url.pathname.length > 0;
  return url.hostname.length > 0 && url.username === '' && url.password === '';
}

const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp);base64,[a-z0-9+/=\s]+$/i;

/** Inline raster images carry no request to anyone; SVG data is excluded (it can hold script). */
export function isInlineImage(src: string | null | undefined): boolean {
  return typeof src === 'string' && DATA_IMAGE.test(src.trim());
}

/** How much of a blocked image's address and alt text is shown; an address can carry a whole conversation. */
export const BLOCKED_IMAGE_URL_CHARS = 300;
const BLOCKED_IMAGE_ALT_CHARS = 200;

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s;
}

/**
 * The text shown instead of an image that is not loaded, `[image: alt — address]`: the person sees
 * what the model tried to make the app fetch. Plain text; the caller escapes it or sets it as a
 * text node, and it is never a link.
 */
export function blockedImageText(alt: string, src: string): string {
  const parts = [clip(alt.trim(), BLOCKED_IMAGE_ALT_CHARS), clip(src.trim(), BLOCKED_IMAGE_URL_CHARS)].filter((p) => p !== '');
  return `[image: ${parts.join(' — ')}]`;
}
