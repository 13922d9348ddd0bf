//! Resource templates: RFC 6570 level 1 (`{var}`, simple string expansion) with a bounded
//! expander. Values are percent-encoded (only unreserved characters pass), so a value can
//! never add a `/`, `:`, `?` or `#` to the URI; a template whose scheme is not literal text is
//! refused, and an expansion whose scheme differs from the template's is refused.
//!
//! Invariant: [`Template::expand`] returns a URI with the template's own scheme, at most
//! [`MAX_URI`] bytes long, or an error naming what was wrong.

use std::collections::BTreeMap;

/// The longest template accepted, and the longest URI an expansion may give.
pub const MAX_URI: usize = 8 * 1024;
/// The longest value of one variable.
pub const MAX_VALUE: usize = 2048;
/// The most variables in one template.
pub const MAX_VARIABLES: usize = 32;

/// Why a template cannot be used or expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// Not a template this app expands.
    #[error("the template {0}")]
    Unsupported(String),
    /// A variable has no value.
    #[error("the template's variable '{0}' has no value")]
    Missing(String),
    /// A value is too long.
    #[error("the value of '{0}' is over {MAX_VALUE} bytes")]
    TooLong(String),
    /// The expansion's scheme is not the template's.
    #[error("the template expands to '{got}:', not to its own scheme '{want}:'; refused")]
    OtherScheme { want: String, got: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Variable(String),
}

/// A parsed level-1 template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
    scheme: String,
}

fn valid_var(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !name.starts_with('.')
}

/// The scheme of `uri` (before the first `:`), if it is a valid one.
pub fn scheme(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(scheme)
}

impl Template {
    /// Parses `text`; refused: over [`MAX_URI`], unbalanced braces, operators or lists
    /// (levels 2-4: `{+x}`, `{/x}`, `{x,y}`, `{x*}`), too many variables, no literal scheme.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let unsupported = |why: &str| Err(TemplateError::Unsupported(why.to_owned()));
        if text.len() > MAX_URI {
            return unsupported(&format!("is over {MAX_URI} bytes"));
        }
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if rest[..open].contains('}') {
                return unsupported("has a '}' without its '{'");
            }
            if open > 0 {
                pieces.push(Piece::Literal(rest[..open].to_owned()));
            }
            let Some(close) = rest[open..].find('}') else { return unsupported("has a '{' without its '}'") };
            let name = &rest[open + 1..open + close];
            if !valid_var(name) {
                return unsupported(&format!(
                    "uses '{{{name}}}', an expression this app does not expand (only {{name}}, RFC 6570 level 1)"
                ));
            }
            pieces.push(Piece::Variable(name.to_owned()));
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return unsupported("has a '}' without its '{'");
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_owned()));
        }
        if pieces.iter().filter(|p| matches!(p, Piece::Variable(_))).count() > MAX_VARIABLES {
            return unsupported(&format!("has more than {MAX_VARIABLES} variables"));
        }
        let scheme = match pieces.first() {
            Some(Piece::Literal(first)) => scheme(first).map(str::to_owned),
            _ => None,
        };
        let Some(scheme) = scheme else { return unsupported("does not start with its scheme (like demo://)") };
        Ok(Template { pieces, scheme })
    }

    /// Its variables, in order (a repeated one once).
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        let mut seen = Vec::new();
        self.pieces.iter().filter_map(move |p| match p {
            Piece::Variable(v) if !seen.contains(v) => {
                seen.push(v.clone());
                Some(v.as_str())
            }
            _ => None,
        })
    }

    /// Its scheme.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The URI with every variable replaced by its value, percent-encoded. Every variable needs
    /// a value (an empty one is allowed); the result keeps the template's scheme.
    pub fn expand(&self, values: &BTreeMap<String, String>) -> Result<String, TemplateError> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Variable(name) => {
                    let value = values.get(name).ok_or_else(|| TemplateError::Missing(name.clone()))?;
                    if value.len() > MAX_VALUE {
                        return Err(TemplateError::TooLong(name.clone()));
                    }
                    encode_into(value, &mut out);
                }
            }
        }
        if out.len() > MAX_URI {
            return Err(TemplateError::Unsupported(format!("expands to more than {MAX_URI} bytes")));
        }
        check_scheme(&self.scheme, &out)?;
        Ok(out)
    }
}

/// Refuses `uri` unless its scheme is `want` (compared as URI schemes are: ignoring case).
pub fn check_scheme(want: &str, uri: &str) -> Result<(), TemplateError> {
    match scheme(uri) {
        Some(got) if got.eq_ignore_ascii_case(want) => Ok(()),
        got => Err(TemplateError::OtherScheme {
            want: want.to_owned(),
            got: got.unwrap_or(uri.split(':').next().unwrap_or("")).chars().take(40).collect(),
        }),
    }
}

/// RFC 6570 simple expansion: unreserved characters as they are, every other byte `%XX`.
fn encode_into(value: &str, out: &mut String) {
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn level_one_expands_with_percent_encoding() {
        let t = Template::parse("demo://resource/dynamic/text/{resourceId}").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["resourceId"]);
        assert_eq!(t.expand(&values(&[("resourceId", "7")])).unwrap(), "demo://resource/dynamic/text/7");
        // RFC 6570's own level-1 examples.
        let t = Template::parse("x:{var}/{hello}").unwrap();
        assert_eq!(
            t.expand(&values(&[("var", "value"), ("hello", "Hello World!")])).unwrap(),
            "x:value/Hello%20World%21"
        );
        let e = t.expand(&values(&[("var", "v")])).unwrap_err();
        assert_eq!(e, TemplateError::Missing("hello".into()));
    }

    #[test]
    fn a_value_cannot_change_the_scheme_or_the_path() {
        let t = Template::parse("notes://{id}").unwrap();
        assert_eq!(t.expand(&values(&[("id", "../../etc/passwd")])).unwrap(), "notes://..%2F..%2Fetc%2Fpasswd");
        assert_eq!(t.expand(&values(&[("id", "file:///x")])).unwrap(), "notes://file%3A%2F%2F%2Fx");
    }

    #[test]
    fn a_template_whose_scheme_is_a_variable_or_that_uses_operators_is_refused() {
        for bad in [
            "{scheme}://x/{id}",
            "{+path}",
            "a://{/path}",
            "a://{x,y}",
            "a://{x*}",
            "a://{x",
            "a://x}",
            "/no/scheme/{x}",
        ] {
            assert!(matches!(Template::parse(bad), Err(TemplateError::Unsupported(_))), "{bad}");
        }
        let e = check_scheme("demo", "file:///etc/passwd").unwrap_err();
        assert_eq!(e.to_string(), "the template expands to 'file:', not to its own scheme 'demo:'; refused");
        assert!(check_scheme("demo", "DEMO://x").is_ok());
    }

    #[test]
    fn expansions_are_bounded() {
        let t = Template::parse("a://{x}").unwrap();
        assert_eq!(t.expand(&values(&[("x", &"y".repeat(MAX_VALUE + 1))])), Err(TemplateError::TooLong("x".into())));
        let many: String = (0..=MAX_VARIABLES).map(|i| format!("{{v{i}}}")).collect();
        assert!(Template::parse(&format!("a://{many}")).is_err());
    }
}
