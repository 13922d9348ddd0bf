//! HTML → Markdown for the model.
//!
//! Why `htmd`: it is a maintained, turndown.js-style converter on html5ever (the browser-grade
//! parser Servo uses), so malformed real-world HTML parses the way browsers parse it, and it emits
//! Markdown directly: headings, paragraphs, lists, tables, code and links survive, which is what a
//! model reads best. `html2text` was the alternative; it renders for a terminal (wrapped lines,
//! footnoted links), which costs tokens and loses the link-to-text association. Writing our own
//! walker on `scraper` would reimplement what htmd already handles (whitespace, nesting, tables).
//!
//! On top of htmd: page chrome (`script`, `style`, `nav`, `footer`, forms, embeds) is skipped,
//! links are made absolute against the page URL so the model can fetch them next, `javascript:`
//! and fragment-only links become plain text, images keep only their alt text, and the `<title>`
//! is taken out for the header line.

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, Options};
use htmd::{Element, HtmlToMarkdown};
use std::sync::{Arc, Mutex};
use url::Url;

/// Elements that are never content.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "footer", "iframe", "frame", "frameset", "object", "embed",
    "svg", "canvas", "form", "button", "select", "input", "textarea", "dialog", "link", "meta",
];

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The `<title>`, whitespace collapsed.
    pub title: Option<String>,
    /// The page body as Markdown.
    pub markdown: String,
}

fn attr(element: &Element, name: &str) -> Option<String> {
    element.attrs.iter().find(|a| &*a.name.local == name).map(|a| a.value.to_string())
}

/// `href` made absolute against `base`; `None` for links that lead nowhere a model can go.
fn absolute(base: &Url, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    let url = base.join(href).ok()?;
    matches!(url.scheme(), "http" | "https" | "mailto").then(|| url.to_string())
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Deeper pages are read as plain text. Why: html5ever's tree builder and htmd's walker both cost
/// O(tags × depth), so a hostile page of nested `<div>`s inside the size limit would take minutes
/// of CPU (and recursion depth). Browsers cap parser depth too (Blink at 512); real pages stay far
/// below 100.
pub const MAX_DEPTH: usize = 256;

/// Elements without an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
    "keygen", "basefont", "bgsound", "frame",
];
/// Elements whose content is not markup.
const RAW_TEXT: &[&str] =
    &["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"];
/// Elements a new one of the same name closes implicitly (`<p>a<p>b`, `<li>a<li>b`).
const SELF_CLOSING_SIBLINGS: &[&str] =
    &["p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "rb", "rt", "rp"];
/// Elements that start a new list/table scope, so an inner `<li>` does not close an outer one.
const SCOPES: &[&str] = &["ul", "ol", "dl", "table", "select", "menu"];

/// One tag found by the scanner.
enum Tag {
    /// `<name ...>`; `end` is the index after `>`.
    Open { name: String, self_closing: bool, end: usize },
    /// `</name>`.
    Close { name: String, end: usize },
    /// A comment, doctype or stray `<`; continue at `end`.
    Skip { end: usize },
}

/// Reads the tag starting at `html[at]` (which is `<`). Linear, allocation only for the name.
fn scan_tag(html: &str, at: usize) -> Tag {
    let bytes = html.as_bytes();
    let rest = &html[at + 1..];
    if rest.starts_with("!--") {
        let end = rest.find("-->").map_or(html.len(), |i| at + 1 + i + 3);
        return Tag::Skip { end };
    }
    let close = rest.starts_with('/');
    let name_start = at + 1 + usize::from(close);
    let name_len = html[name_start..].bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'-').count();
    let starts_alpha = bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic);
    // The end of the tag: the first `>` outside quotes.
    let mut quote = None;
    let mut end = html.len();
    for (i, &b) in bytes.iter().enumerate().skip(name_start + name_len) {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (None, b'>') => {
                end = i + 1;
                break;
            }
            _ => {}
        }
    }
    if !starts_alpha {
        // `<!doctype>`, `<?xml?>`, or a bare `<` in text.
        let end = if rest.starts_with('!') || rest.starts_with('?') { end } else { at + 1 };
        return Tag::Skip { end };
    }
    let name = html[name_start..name_start + name_len].to_ascii_lowercase();
    if close {
        Tag::Close { name, end }
    } else {
        let self_closing = end >= 2 && bytes[end - 2] == b'/';
        Tag::Open { name, self_closing, end }
    }
}

/// Skips the content of a raw-text element: the index after its end tag.
fn skip_raw(html: &str, from: usize, name: &str) -> usize {
    let lower = html[from..].to_ascii_lowercase();
    let needle = format!("</{name}");
    match lower.find(&needle) {
        Some(i) => html[from + i..].find('>').map_or(html.len(), |j| from + i + j + 1),
        None => html.len(),
    }
}

/// Whether the element nesting goes deeper than `cap`, estimated with a simplified tree builder
/// (end tags close up to their match, void and self-closed elements do not nest, `<p>`/`<li>`/...
/// close their open sibling). Linear in the input; stops as soon as the cap is passed.
pub(crate) fn deeper_than(html: &str, cap: usize) -> bool {
    let mut stack: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let at = i + off;
        match scan_tag(html, at) {
            Tag::Skip { end } => i = end.max(at + 1),
            Tag::Close { name, end } => {
                if let Some(pos) = stack.iter().rposition(|n| *n == name) {
                    stack.truncate(pos);
                }
                i = end;
            }
            Tag::Open { name, self_closing, end } => {
                i = end;
                if RAW_TEXT.contains(&name.as_str()) {
                    i = skip_raw(html, end, &name);
                    continue;
                }
                if self_closing || VOID.contains(&name.as_str()) {
                    continue;
                }
                if SELF_CLOSING_SIBLINGS.contains(&name.as_str()) {
                    let open_sibling = stack
                        .iter()
                        .rposition(|n| *n == name || SCOPES.contains(&n.as_str()))
                        .filter(|&p| stack[p] == name);
                    if let Some(pos) = open_sibling {
                        stack.truncate(pos);
                    }
                }
                stack.push(name);
                if stack.len() > cap {
                    return true;
                }
            }
        }
    }
    false
}

/// The text of a page without its markup: the fallback for pages too deep to convert. Linear.
fn plain_text(html: &str) -> String {
    const BLOCKS: &[&str] = &[
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "article",
        "blockquote",
        "pre",
        "table",
        "ul",
        "ol",
        "hr",
    ];
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let at = i + off;
        out.push_str(&html[i..at]);
        match scan_tag(html, at) {
            Tag::Skip { end } => {
                if end == at + 1 {
                    out.push('<');
                }
                i = end.max(at + 1);
            }
            Tag::Open { name, end, .. } => {
                i = if RAW_TEXT.contains(&name.as_str()) { skip_raw(html, end, &name) } else { end };
                out.push(if BLOCKS.contains(&name.as_str()) { '\n' } else { ' ' });
            }
            Tag::Close { name, end } => {
                i = end;
                out.push(if BLOCKS.contains(&name.as_str()) { '\n' } else { ' ' });
            }
        }
    }
    out.push_str(&html[i..]);
    let text = decode_entities(&out);
    text.lines().map(collapse).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// The common character references; enough for the plain-text fallback.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let tail = &rest[amp..];
        let semi = tail[..tail.len().min(12)].find(';');
        let decoded = semi.and_then(|end| {
            let name = &tail[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, end + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `<title>` by a plain scan (for the fallback path, where the page is not parsed).
fn scan_title(html: &str) -> Option<String> {
    let lower = html[..html.len().min(64 * 1024)].to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    Some(collapse(&decode_entities(&html[start..end]))).filter(|t| !t.is_empty())
}

/// Converts `html` fetched from `base`. Synchronous and CPU-bound; run it off the async runtime.
pub fn to_markdown(html: &str, base: &Url) -> Converted {
    if deeper_than(html, MAX_DEPTH) {
        return Converted {
            title: scan_title(html),
            markdown: format!(
                "(This page nests its markup more than {MAX_DEPTH} levels deep, so only its plain text is shown.)\n\n{}",
                plain_text(html)
            ),
        };
    }
    let title = Arc::new(Mutex::new(None::<String>));
    let title_sink = title.clone();
    let link_base = base.clone();
    let converter = HtmlToMarkdown::builder()
        .options(Options {
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Options::default()
        })
        .skip_tags(SKIPPED.to_vec())
        .add_handler(vec!["title"], move |handlers: &dyn Handlers, element: Element| -> Option<HandlerResult> {
            let text = collapse(&handlers.walk_children(element.node).content);
            if let Ok(mut slot) = title_sink.lock()
                && slot.is_none()
                && !text.is_empty()
            {
                *slot = Some(text);
            }
            None
        })
        .add_handler(vec!["a"], move |handlers: &dyn Handlers, element: Element| -> Option<HandlerResult> {
            let content = handlers.walk_children(element.node).content;
            let text = content.trim();
            let target = attr(&element, "href").and_then(|h| absolute(&link_base, &h));
            Some(match target {
                Some(url) if text.is_empty() => format!("<{url}>").into(),
                Some(url) => format!("[{}]({})", text.replace(['[', ']'], ""), url.replace(' ', "%20")).into(),
                None => text.to_owned().into(),
            })
        })
        .add_handler(vec!["img"], move |_: &dyn Handlers, element: Element| -> Option<HandlerResult> {
            // Images cost tokens and a model cannot see them: keep the description, if any.
            let alt = attr(&element, "alt").map(|a| collapse(&a)).filter(|a| !a.is_empty())?;
            Some(format!("[image: {}]", alt.replace(['[', ']'], "")).into())
        })
        .build();
    let markdown = converter.convert(html).unwrap_or_default();
    let title = title.lock().ok().and_then(|t| t.clone());
    Converted { title, markdown: tidy(&markdown) }
}

/// At most one blank line in a row and no trailing spaces: whitespace is tokens too.
fn tidy(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut blank = 0;
    for line in md.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("https://example.org/docs/page.html").unwrap()
    }

    #[test]
    fn keeps_structure_and_drops_chrome() {
        let html = r##"<!doctype html><html><head><title> The  Page </title><style>p{}</style>
            <script>alert(1)</script></head><body>
            <nav><a href="/">Home</a> | <a href="/about">About</a></nav>
            <h1>Main heading</h1><p>First <b>bold</b> paragraph with a <a href="other.html">relative link</a>.</p>
            <h2>List</h2><ul><li>one</li><li>two <a href="#top">top</a></li></ul>
            <ol><li>first</li><li>second</li></ol>
            <p><a href="javascript:void(0)">click</a> <img src="x.png" alt="A chart"> <img src="y.png"></p>
            <footer>Copyright</footer></body></html>"##;
        let c = to_markdown(html, &base());
        assert_eq!(c.title.as_deref(), Some("The Page"));
        let md = &c.markdown;
        assert!(md.starts_with("# Main heading"), "{md}");
        assert!(
            md.contains("First **bold** paragraph with a [relative link](https://example.org/docs/other.html)."),
            "{md}"
        );
        assert!(md.contains("## List"), "{md}");
        assert!(md.contains("- one\n- two top"), "{md}");
        assert!(md.contains("1. first\n2. second"), "{md}");
        assert!(md.contains("click [image: A chart]"), "{md}");
        for gone in ["alert", "p{}", "Home", "About", "Copyright", "The Page", "y.png"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn deeply_nested_pages_fall_back_to_plain_text_quickly() {
        let depth = 200_000; // 1 MB of <div>s: minutes of CPU if parsed as a tree
        let html = format!(
            "<title>Deep &amp; dark</title>{}deep &lt;text&gt; &#x263A;<script>x()</script>{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let started = std::time::Instant::now();
        let out = to_markdown(&html, &base());
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(out.title.as_deref(), Some("Deep & dark"));
        assert!(out.markdown.contains("deep <text> \u{263A}"), "{}", &out.markdown[..200]);
        assert!(out.markdown.contains("plain text"), "{}", &out.markdown[..200]);
        assert!(!out.markdown.contains("x()"));
    }

    #[test]
    fn the_depth_estimate_follows_the_tree_not_the_tag_count() {
        let flat = "<p>a<p>b<li>c<li>d<br><img src=x><div></div>".repeat(10_000);
        assert!(!deeper_than(&flat, 8));
        let nested_lists = "<ul><li>".repeat(5);
        assert!(!deeper_than(&nested_lists, 10));
        assert!(deeper_than(&nested_lists, 9));
        assert!(!deeper_than("<script><div><div><div></script><!-- <div><div> --><a title='>'>x</a>", 1));
        assert!(deeper_than(&"<div>".repeat(300), MAX_DEPTH));
        // Just under the cap, a real conversion, still quick.
        let html = format!("{}<p>inner <b>text</b></p>{}", "<div>".repeat(200), "</div>".repeat(200));
        let out = to_markdown(&html, &base());
        assert_eq!(out.markdown, "inner **text**");
    }
}
