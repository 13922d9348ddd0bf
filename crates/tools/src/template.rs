//! `{{param}}` and `{{secret:NAME}}` templates, shared by the tools people define without code
//! (HTTP API tools, command tools).
//!
//! A template is parsed once, when the tool is defined, so a mistake (an unclosed `{{`, a name
//! that is not a name) is reported in the editor, never at the model's first call. Rendering
//! does no encoding of its own: the caller gives a closure per kind of placeholder and encodes
//! for the position (a URL path segment, a query value, one argv element).

use serde_json::{Value, json};

/// One part of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text kept as written.
    Literal(String),
    /// `{{name}}`: the argument `name`.
    Param(String),
    /// `{{secret:NAME}}`: the key store's entry `NAME`.
    Secret(String),
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// Why a template cannot be used. The text completes "The template … ".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{{` without its `}}`.
    #[error("'{0}' opens a placeholder with {{{{ that is never closed with }}}}")]
    Unclosed(String),
    /// `{{}}`, `{{ two words }}`, `{{1abc}}`, `{{secret:}}`.
    #[error("'{{{{{0}}}}}' is not a placeholder: use {{{{name}}}} (letters, digits, _) or {{{{secret:NAME}}}}")]
    BadName(String),
}

/// Whether `s` can name a parameter: `[A-Za-z_][A-Za-z0-9_]*`, at most 64 characters.
pub fn is_param_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 64
}

/// Whether `s` can name a secret: `[A-Za-z0-9_.-]+`, at most 64 characters.
pub fn is_secret_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

impl Template {
    /// Parses `s`. Spaces inside the braces are allowed (`{{ query }}`).
    pub fn parse(s: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = s;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                pieces.push(Piece::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 2..];
            let close = after.find("}}").ok_or_else(|| TemplateError::Unclosed(s.to_owned()))?;
            let inner = after[..close].trim();
            let piece = match inner.strip_prefix("secret:") {
                Some(name) if is_secret_name(name.trim()) => Piece::Secret(name.trim().to_owned()),
                None if is_param_name(inner) => Piece::Param(inner.to_owned()),
                _ => return Err(TemplateError::BadName(inner.to_owned())),
            };
            pieces.push(piece);
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_owned()));
        }
        Ok(Template { pieces })
    }

    /// Its parts, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The parameters it uses, in order of first use.
    pub fn params(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in &self.pieces {
            if let Piece::Param(name) = p
                && !out.contains(&name.as_str())
            {
                out.push(name);
            }
        }
        out
    }

    /// The secrets it uses, in order of first use.
    pub fn secrets(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in &self.pieces {
            if let Piece::Secret(name) = p
                && !out.contains(&name.as_str())
            {
                out.push(name);
            }
        }
        out
    }

    /// Whether it has no placeholder at all.
    pub fn is_literal(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Literal(_)))
    }

    /// The template with each placeholder replaced by what `param` or `secret` returns for it
    /// (already encoded for where it goes); literals are kept as written.
    pub fn render<E>(
        &self,
        mut param: impl FnMut(&str) -> Result<String, E>,
        mut secret: impl FnMut(&str) -> Result<String, E>,
    ) -> Result<String, E> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Literal(s) => out.push_str(s),
                Piece::Param(name) => out.push_str(&param(name)?),
                Piece::Secret(name) => out.push_str(&secret(name)?),
            }
        }
        Ok(out)
    }
}

/// An argument as text for a template: a string as it is, `null` as nothing, numbers and
/// booleans as JSON writes them, arrays and objects as compact JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The parameter schema a tool gets when the person wrote none: every placeholder a required
/// string.
pub fn schema_for(params: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> =
        params.iter().map(|p| ((*p).to_owned(), json!({ "type": "string" }))).collect();
    json!({ "type": "object", "properties": properties, "required": params, "additionalProperties": false })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_parsed_with_their_kind() {
        let t = Template::parse("https://x.test/{{ user }}/repos?k={{secret:gh-token}}&u={{user}}").unwrap();
        assert_eq!(t.params(), ["user"]);
        assert_eq!(t.secrets(), ["gh-token"]);
        assert!(!t.is_literal());
        assert!(Template::parse("plain {text}").unwrap().is_literal());
        assert_eq!(Template::parse("").unwrap().pieces(), []);
    }

    #[test]
    fn broken_placeholders_are_refused_with_the_reason() {
        assert!(matches!(Template::parse("a {{b"), Err(TemplateError::Unclosed(_))));
        for bad in ["{{}}", "{{two words}}", "{{1abc}}", "{{secret:}}", "{{secret:a b}}", "{{a-b}}"] {
            assert!(matches!(Template::parse(bad), Err(TemplateError::BadName(_))), "{bad}");
        }
        let message = Template::parse("{{a b}}").unwrap_err().to_string();
        assert!(message.contains("'{{a b}}' is not a placeholder"), "{message}");
    }

    #[test]
    fn rendering_encodes_nothing_itself() {
        let t = Template::parse("{{a}}-{{secret:K}}-{{a}}").unwrap();
        let out: Result<String, ()> = t.render(|p| Ok(format!("<{p}>")), |s| Ok(format!("[{s}]")));
        assert_eq!(out.unwrap(), "<a>-[K]-<a>");
        let missing: Result<String, String> = t.render(|p| Err(format!("no {p}")), |_| Ok(String::new()));
        assert_eq!(missing.unwrap_err(), "no a");
    }

    #[test]
    fn values_become_text_and_placeholders_become_a_schema() {
        assert_eq!(value_text(&json!("héllo")), "héllo");
        assert_eq!(value_text(&json!(3.5)), "3.5");
        assert_eq!(value_text(&json!(true)), "true");
        assert_eq!(value_text(&json!(null)), "");
        assert_eq!(value_text(&json!([1, "a"])), r#"[1,"a"]"#);
        let schema = schema_for(&["q", "n"]);
        assert_eq!(schema["required"], json!(["q", "n"]));
        assert_eq!(schema["properties"]["n"]["type"], "string");
    }
}
