//! What a tool's server may ask of the person during a call, as plain data: a form or a page to
//! visit ([`ElicitationRequest`], answered with an [`ElicitationAnswer`]) and a model completion
//! to approve ([`SamplingRequest`], answered with a [`SamplingDecision`]). MCP servers ask these;
//! the [`crate::Approver`] puts them to the person and [`crate::ToolContext`] emits the events.
//!
//! Invariant: a form carries only the field types the MCP specification allows (text with an
//! optional format, number or integer, boolean, single or multiple choice), each already checked;
//! [`ElicitationForm::complete`] is the one check of an answer against it (types, required
//! fields, choices, bounds) and fills in the defaults of fields left out (SEP-1034).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a server asks for input.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ElicitationMode {
    /// A form the app draws from the fields.
    Form,
    /// A page of the server's to open in the browser, after the person agrees.
    Url,
}

/// What the person did with a request for input.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ElicitationAction {
    /// Sent the form (or agreed to open the page).
    Accept,
    /// Said no.
    Decline,
    /// Dismissed it without choosing (or the turn ended while it waited).
    Cancel,
}

impl ElicitationAction {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        }
    }
}

/// One choice of a choice field.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldChoice {
    /// The value sent back.
    pub value: String,
    /// What the person reads; the value when the server gave no title.
    pub title: String,
}

/// What kind of value a form field takes, with its bounds and default.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum FieldKind {
    /// Free text; `format` is `email`, `uri`, `date` or `date-time` when given.
    Text {
        /// The text's format, when the schema names one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        format: Option<String>,
        /// The fewest characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        min_length: Option<u32>,
        /// The most characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        max_length: Option<u32>,
        /// The value the form starts with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        default: Option<String>,
    },
    /// A number; `integer` when only whole numbers are allowed.
    Number {
        /// Whole numbers only.
        integer: bool,
        /// The smallest value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        minimum: Option<f64>,
        /// The largest value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        maximum: Option<f64>,
        /// The value the form starts with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        default: Option<f64>,
    },
    /// Yes or no.
    Boolean {
        /// The value the form starts with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        default: Option<bool>,
    },
    /// One of `choices` (`multiple`: any number of them, within `min_items`..`max_items`).
    Choice {
        /// The choices, in the server's order.
        choices: Vec<FieldChoice>,
        /// Several may be chosen (the value is an array).
        multiple: bool,
        /// The fewest choices (multiple only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        min_items: Option<u32>,
        /// The most choices (multiple only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        max_items: Option<u32>,
        /// The choices the form starts with (one at most when not `multiple`).
        #[serde(default)]
        default: Vec<String>,
    },
}

/// One field of a form.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormField {
    /// The property name sent back.
    pub name: String,
    /// The label; the name when the server gave no title.
    pub title: String,
    /// The server's description of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<String>,
    /// It must be filled in to accept.
    pub required: bool,
    /// What it takes.
    pub kind: FieldKind,
}

/// A form: its fields in the server's order.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationForm {
    /// The fields.
    pub fields: Vec<FormField>,
}

impl ElicitationForm {
    /// `content` checked against the fields, with the defaults of fields left out filled in:
    /// what goes back to the server. `Err` names the first field that is wrong, in words.
    /// Properties the form does not have are dropped.
    pub fn complete(&self, content: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        for field in &self.fields {
            let given = content.get(&field.name).filter(|v| !v.is_null());
            let value = match given {
                Some(v) => check(field, v)?,
                None => match default_of(&field.kind) {
                    Some(d) => d,
                    None if field.required => return Err(format!("'{}' is required.", field.title)),
                    None => continue,
                },
            };
            out.insert(field.name.clone(), value);
        }
        Ok(out)
    }
}

fn default_of(kind: &FieldKind) -> Option<Value> {
    match kind {
        FieldKind::Text { default, .. } => default.clone().map(Value::String),
        FieldKind::Number { integer: true, default, .. } => default.map(|d| Value::from(d as i64)),
        FieldKind::Number { default, .. } => default.and_then(|d| serde_json::Number::from_f64(d).map(Value::Number)),
        FieldKind::Boolean { default } => default.map(Value::Bool),
        FieldKind::Choice { multiple: true, default, .. } if !default.is_empty() => {
            Some(Value::Array(default.iter().cloned().map(Value::String).collect()))
        }
        FieldKind::Choice { multiple: false, default, .. } => default.first().cloned().map(Value::String),
        FieldKind::Choice { .. } => None,
    }
}

fn check(field: &FormField, value: &Value) -> Result<Value, String> {
    let name = &field.title;
    match &field.kind {
        FieldKind::Text { min_length, max_length, .. } => {
            let Some(text) = value.as_str() else { return Err(format!("'{name}' must be text.")) };
            let n = text.chars().count() as u64;
            if field.required && text.trim().is_empty() {
                return Err(format!("'{name}' is required."));
            }
            if min_length.is_some_and(|m| n < u64::from(m)) || max_length.is_some_and(|m| n > u64::from(m)) {
                return Err(format!("'{name}' has {n} characters, outside what the server allows."));
            }
            Ok(value.clone())
        }
        FieldKind::Number { integer, minimum, maximum, .. } => {
            let number = match value {
                Value::Number(n) => n.as_f64(),
                // A form's input gives text: a number written out is taken.
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            };
            let Some(number) = number.filter(|n| n.is_finite()) else {
                return Err(format!("'{name}' must be a number."));
            };
            if *integer && number.fract() != 0.0 {
                return Err(format!("'{name}' must be a whole number."));
            }
            if minimum.is_some_and(|m| number < m) || maximum.is_some_and(|m| number > m) {
                return Err(format!("'{name}' is outside the range the server allows."));
            }
            Ok(if *integer {
                Value::from(number as i64)
            } else {
                serde_json::Number::from_f64(number).map(Value::Number).unwrap_or(Value::Null)
            })
        }
        FieldKind::Boolean { .. } => match value {
            Value::Bool(_) => Ok(value.clone()),
            Value::String(s) if s == "true" || s == "false" => Ok(Value::Bool(s == "true")),
            _ => Err(format!("'{name}' must be yes or no.")),
        },
        FieldKind::Choice { choices, multiple, min_items, max_items, .. } => {
            let known = |v: &Value| v.as_str().is_some_and(|s| choices.iter().any(|c| c.value == s));
            if *multiple {
                let Some(items) = value.as_array() else { return Err(format!("'{name}' must be a list of choices.")) };
                if let Some(bad) = items.iter().find(|v| !known(v)) {
                    return Err(format!("'{name}' has {bad}, which is not one of its choices."));
                }
                let n = items.len() as u64;
                if min_items.is_some_and(|m| n < u64::from(m)) || max_items.is_some_and(|m| n > u64::from(m)) {
                    return Err(format!("'{name}' has {n} choices, outside what the server allows."));
                }
                Ok(value.clone())
            } else if known(value) {
                Ok(value.clone())
            } else {
                Err(format!("'{name}' must be one of its choices."))
            }
        }
    }
}

/// A server's request for the person's input during a tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationRequest {
    /// The conversation of the call.
    pub conversation_id: String,
    /// The call it came during.
    pub call_id: String,
    /// This request's id (unique in the app while it waits), for the answer.
    pub request_id: String,
    /// The server asking.
    pub server: String,
    /// The server's tool being called.
    pub tool: String,
    /// What the server says it needs.
    pub message: String,
    /// Form or page.
    pub mode: ElicitationMode,
    /// The form (form mode).
    pub form: ElicitationForm,
    /// The page (URL mode): an https URL, or http on this computer.
    pub url: Option<String>,
    /// Set when the request cannot be shown (a schema type the specification does not allow, a
    /// URL that is not https): it is declined without asking, and the card says why.
    pub refused: Option<String>,
}

/// The person's answer to an [`ElicitationRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationAnswer {
    /// What they did.
    pub action: ElicitationAction,
    /// The form's values (accept, form mode), as the person gave them; the asker completes
    /// them with [`ElicitationForm::complete`].
    pub content: Option<Map<String, Value>>,
}

impl ElicitationAnswer {
    /// A refusal.
    pub fn decline() -> Self {
        Self { action: ElicitationAction::Decline, content: None }
    }

    /// Dismissed (the turn stopped).
    pub fn cancel() -> Self {
        Self { action: ElicitationAction::Cancel, content: None }
    }
}

/// Who wrote a message of a sampling request.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SamplingRole {
    /// The user side.
    User,
    /// The model side.
    Assistant,
}

/// One message of a sampling request, as the person reads (and may edit) it: its text, with
/// images and audio named in words.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who wrote it.
    pub role: SamplingRole,
    /// Its text (an image: `[image: image/png, 12 KB]`).
    pub text: String,
    /// The images it carries, sent to the model with the text (not shown in events).
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub images: Vec<crate::vocab::ToolImage>,
}

/// A server's request for a model completion during a tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingRequest {
    /// The conversation of the call.
    pub conversation_id: String,
    /// The call it came during.
    pub call_id: String,
    /// This request's id (unique in the app while it waits), for the answer.
    pub request_id: String,
    /// The server asking.
    pub server: String,
    /// The server's tool being called.
    pub tool: String,
    /// The conversation the server wants continued.
    pub messages: Vec<SamplingMessage>,
    /// The system prompt it asks for.
    pub system_prompt: Option<String>,
    /// The most output tokens the completion may use: what the server asked for, capped.
    pub max_tokens: u32,
    /// What the server asked for, when more than `max_tokens` (the card shows the cap).
    pub requested_max_tokens: Option<u32>,
    /// The server's model preferences in words (hints and priorities), shown, never obeyed.
    pub model_preferences: Option<String>,
    /// The temperature it asks for.
    pub temperature: Option<f32>,
}

/// The person's answer to a [`SamplingRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum SamplingDecision {
    /// Run it; with `messages` when the person edited them.
    Approve {
        /// The edited messages (their text), replacing the server's.
        messages: Option<Vec<SamplingMessage>>,
    },
    /// Don't; the server is told the person refused.
    Deny,
}

/// A completion made for a server.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    /// The model's answer.
    pub text: String,
    /// The model that wrote it.
    pub model: String,
    /// It stopped at `max_tokens`.
    pub truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(name: &str, required: bool, kind: FieldKind) -> FormField {
        FormField { name: name.into(), title: name.into(), description: None, required, kind }
    }

    fn form() -> ElicitationForm {
        ElicitationForm {
            fields: vec![
                field(
                    "name",
                    true,
                    FieldKind::Text { format: None, min_length: None, max_length: Some(5), default: None },
                ),
                field(
                    "age",
                    false,
                    FieldKind::Number { integer: true, minimum: Some(0.0), maximum: None, default: Some(30.0) },
                ),
                field("ok", false, FieldKind::Boolean { default: Some(true) }),
                field(
                    "status",
                    false,
                    FieldKind::Choice {
                        choices: vec![
                            FieldChoice { value: "a".into(), title: "A".into() },
                            FieldChoice { value: "b".into(), title: "B".into() },
                        ],
                        multiple: false,
                        min_items: None,
                        max_items: None,
                        default: vec!["a".into()],
                    },
                ),
            ],
        }
    }

    #[test]
    fn defaults_fill_what_is_left_out_and_wrong_values_are_named() {
        let done = form().complete(json!({"name": "Ann", "extra": 1}).as_object().unwrap()).unwrap();
        assert_eq!(json!(done), json!({"name": "Ann", "age": 30, "ok": true, "status": "a"}));
        let f = form();
        let bad = |v: Value| f.complete(v.as_object().unwrap()).unwrap_err();
        assert!(bad(json!({})).contains("'name' is required"));
        assert!(bad(json!({"name": "toolong"})).contains("characters"));
        assert!(bad(json!({"name": "A", "age": 1.5})).contains("whole number"));
        assert!(bad(json!({"name": "A", "age": -1})).contains("range"));
        assert!(bad(json!({"name": "A", "status": "c"})).contains("one of its choices"));
        let typed = f.complete(json!({"name": "A", "age": "41", "ok": "false"}).as_object().unwrap()).unwrap();
        assert_eq!((typed["age"].clone(), typed["ok"].clone()), (json!(41), json!(false)));
    }
}
