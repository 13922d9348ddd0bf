//! Which links may be handed to the system opener (the person's browser or mail program).
//!
//! Links come from model output and web pages, shown in an untrusted webview; the page asks the
//! shell to open one and the shell opens only what [`external_url`] accepts, checked here in
//! Rust. The rules:
//!
//! - `http`, `https` and `mailto` only (no `javascript:`, `file:`, `data:`, custom schemes that
//!   start other programs);
//! - no whitespace, control or invisible formatting characters anywhere in the text as given
//!   (a newline or a bidi override can make a link read as something else, or split it into two
//!   arguments for a badly written opener); percent-escapes such as `%0a` are accepted: they are
//!   inert data inside one URL, and every browser sends them as they are;
//! - http(s) needs a host and no user name or password (`https://bank.example@evil.example`);
//! - at most [`MAX_URL_CHARS`] characters;
//! - what is opened is the parsed URL written out again, so an international domain name goes out
//!   as its punycode (`xn--...`), the form the browser shows in its address bar.

use crate::{Error, Result};

/// The longest link opened. Longer ones are refused rather than cut (a cut link goes elsewhere).
pub const MAX_URL_CHARS: usize = 4096;

/// The link to hand to the system opener, or why it is refused (an error to show the person).
pub fn external_url(text: &str) -> Result<String> {
    let refuse = |why: &str| Err(Error::new(switchboard_core::ErrorKind::BadRequest, format!("Not opened: {why}")));
    if text.chars().count() > MAX_URL_CHARS {
        return refuse(&format!("the link is longer than {MAX_URL_CHARS} characters."));
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control() || switchboard_core::visible::hides_text(c)) {
        return refuse("the link contains spaces, line breaks or invisible characters.");
    }
    let Ok(url) = url::Url::parse(text) else { return refuse("this is not a valid link.") };
    match url.scheme() {
        "http" | "https" => {
            if url.host_str().is_none_or(str::is_empty) {
                return refuse("the link has no host.");
            }
            if !url.username().is_empty() || url.password().is_some() {
                return refuse("the link carries a user name or password, which can disguise where it goes.");
            }
        }
        "mailto" => {}
        other => return refuse(&format!("only web (http, https) and mailto links are opened, not '{other}:'.")),
    }
    Ok(url.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_and_mail_links_are_opened_as_parsed() {
        assert_eq!(external_url("https://example.com/a?b=c#d").unwrap(), "https://example.com/a?b=c#d");
        assert_eq!(external_url("http://example.com").unwrap(), "http://example.com/");
        assert_eq!(external_url("mailto:someone@example.com").unwrap(), "mailto:someone@example.com");
        // Percent-escapes are data inside one URL and pass unchanged.
        assert_eq!(external_url("https://x.example/%0a%00").unwrap(), "https://x.example/%0a%00");
        // An international name goes out as the browser will show it.
        assert_eq!(external_url("https://bücher.example/").unwrap(), "https://xn--bcher-kva.example/");
    }

    #[test]
    fn hostile_links_are_refused() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox",
            "ssh://example.com",
            "smb://server/share",
            "http://a b",
            " https://example.com",
            "https://example.com\n",
            "https://x\u{0000}",
            "https://example.com/\u{202E}fdp.exe",
            "https://exa\u{200B}mple.com",
            "https://bank.example@evil.example/",
            "https://user:pass@example.com/",
            "https://",
            "example.com",
            "",
        ] {
            let err = external_url(bad).expect_err(bad);
            assert!(err.message.starts_with("Not opened: "), "{bad:?}: {}", err.message);
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(external_url(&long).unwrap_err().message.contains("longer than"));
    }
}
