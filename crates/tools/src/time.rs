//! `get_time`: the current date and time in an IANA time zone.

use chrono::Utc;
use chrono_tz::Tz;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use switchboard_core::{Tool, ToolContext, ToolDef, ToolError, ToolOutput};

/// The current time, in UTC unless the model names a zone.
#[derive(Debug)]
pub struct GetTime {
    def: ToolDef,
}

impl Default for GetTime {
    fn default() -> Self {
        Self::new()
    }
}

impl GetTime {
    /// The tool.
    pub fn new() -> Self {
        let mut def = ToolDef::new(
            "get_time",
            "Get the current date and time. Use it whenever the answer depends on today's date or the time somewhere.",
            json!({
                "type": "object",
                "properties": {
                    "timezone": {
                        "type": "string",
                        "description": "IANA time zone name such as Europe/Paris or America/New_York. Defaults to UTC."
                    }
                },
                "additionalProperties": false
            }),
        );
        def.example_output = Some(
            json!({"timezone": "UTC", "iso": "2026-01-01T12:00:00+00:00", "date": "2026-01-01", "time": "12:00:00", "weekday": "Thursday", "utcOffset": "+00:00", "unix": 1767268800})
                .to_string(),
        );
        Self { def }
    }

    /// The result for `args` at `now` (separate from `call` so tests can fix the clock).
    pub fn at(args: &Value, now: chrono::DateTime<Utc>) -> Result<ToolOutput, ToolError> {
        let name = match args.get("timezone") {
            None | Some(Value::Null) => "UTC",
            Some(Value::String(s)) if s.trim().is_empty() => "UTC",
            Some(Value::String(s)) => s.trim(),
            Some(other) => return Err(ToolError::InvalidArguments(format!("timezone must be a string, got {other}"))),
        };
        let tz: Tz = name.parse().map_err(|_| {
            ToolError::InvalidArguments(format!(
                "unknown time zone '{name}'; use an IANA name such as Europe/Paris, America/New_York or UTC"
            ))
        })?;
        let local = now.with_timezone(&tz);
        Ok(ToolOutput::text(
            json!({
                "timezone": tz.name(),
                "iso": local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
                "date": local.format("%Y-%m-%d").to_string(),
                "time": local.format("%H:%M:%S").to_string(),
                "weekday": local.format("%A").to_string(),
                "utcOffset": local.format("%:z").to_string(),
                "unix": now.timestamp(),
            })
            .to_string(),
        ))
    }
}

impl Tool for GetTime {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        async move { Self::at(&args, Utc::now()) }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> chrono::DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, 3, 4, 5).unwrap()
    }

    fn out(args: Value) -> Value {
        serde_json::from_str(&GetTime::at(&args, now()).unwrap().text).unwrap()
    }

    #[test]
    fn defaults_to_utc() {
        let v = out(json!({}));
        assert_eq!(v["timezone"], "UTC");
        assert_eq!(v["iso"], "2026-11-22T03:04:05+00:00");
        assert_eq!(v["weekday"], "Sunday");
    }

    #[test]
    fn converts_to_the_named_zone() {
        let v = out(json!({"timezone": "Asia/Tokyo"}));
        assert_eq!(v["iso"], "2026-11-22T12:04:05+09:00");
        assert_eq!(v["utcOffset"], "+09:00");
        let v = out(json!({"timezone": " America/New_York "}));
        assert_eq!(v["date"], "2026-11-21");
    }

    #[test]
    fn rejects_unknown_zones_with_a_hint() {
        let e = GetTime::at(&json!({"timezone": "Mars/Olympus"}), now()).unwrap_err();
        assert!(e.to_string().contains("unknown time zone 'Mars/Olympus'"), "{e}");
        assert!(e.to_string().contains("Europe/Paris"));
    }

    #[test]
    fn the_schema_rejects_extra_fields_and_wrong_types() {
        let reg = crate::builtin_registry().unwrap();
        assert!(reg.validate("get_time", &json!({"timezone": "UTC"})).is_ok());
        let e = reg.validate("get_time", &json!({"timezone": 5})).unwrap_err();
        assert!(e.contains("/timezone"), "{e}");
        assert!(reg.validate("get_time", &json!({"tz": "UTC"})).is_err());
    }
}
