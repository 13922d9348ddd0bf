//! Planning one round of tool calls: duplicates, the per-round cap, control-taking tools. Pure.

use crate::types::ToolCall;
use serde_json::Value;
use std::collections::HashMap;

/// What happens to one call of a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Validate and run it.
    Run,
    /// Same name and same canonical arguments as the call at this index: gets that call's result.
    DuplicateOf(usize),
    /// Over `max_tool_calls_per_round`: answered with a "skipped" error.
    OverCap,
    /// The round contains a control-taking tool together with other calls: none of them runs.
    NotAlone {
        /// The control-taking tool that must be called alone.
        control_tool: String,
    },
}

/// Arguments in a canonical form: parsed JSON re-serialized with sorted keys and no whitespace;
/// text that is not JSON stays as it is (so it is only a duplicate of the identical text).
pub fn canonical_args(raw: &str) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let trimmed = raw.trim();
    let parsed =
        if trimmed.is_empty() { Ok(Value::Object(Default::default())) } else { serde_json::from_str::<Value>(trimmed) };
    match parsed {
        Ok(v) => {
            let mut out = String::new();
            write(&v, &mut out);
            out
        }
        Err(_) => raw.to_owned(),
    }
}

/// Plans a round. `takes_control(name)` tells whether a tool takes over the turn.
pub fn plan_round(calls: &[ToolCall], max_calls: usize, takes_control: impl Fn(&str) -> bool) -> Vec<Plan> {
    let mut plans = Vec::with_capacity(calls.len());
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut unique = 0usize;
    for (i, call) in calls.iter().enumerate() {
        let key = (call.name.clone(), canonical_args(&call.arguments));
        if let Some(&first) = seen.get(&key) {
            plans.push(Plan::DuplicateOf(first));
            continue;
        }
        seen.insert(key, i);
        unique += 1;
        plans.push(if unique > max_calls { Plan::OverCap } else { Plan::Run });
    }
    if unique > 1
        && let Some(control) = calls.iter().find(|c| takes_control(&c.name))
    {
        let control_tool = control.name.clone();
        return calls.iter().map(|_| Plan::NotAlone { control_tool: control_tool.clone() }).collect();
    }
    plans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    #[test]
    fn canonical_args_ignore_key_order_and_whitespace() {
        assert_eq!(canonical_args(r#"{"b": 1, "a": {"y": 2, "x": [1, 2]}}"#), r#"{"a":{"x":[1,2],"y":2},"b":1}"#);
        assert_eq!(canonical_args(""), "{}");
        assert_eq!(canonical_args("{not json"), "{not json");
    }

    #[test]
    fn rounds_are_planned() {
        let never = |_: &str| false;
        let cases: Vec<(&str, Vec<ToolCall>, usize, Vec<Plan>)> = vec![
            ("all distinct run", vec![call("1", "a", "{}"), call("2", "b", "{}")], 8, vec![Plan::Run, Plan::Run]),
            (
                "exact duplicates reuse the first result",
                vec![
                    call("1", "a", r#"{"x":1,"y":2}"#),
                    call("2", "a", r#"{ "y": 2, "x": 1 }"#),
                    call("3", "a", r#"{"x":2}"#),
                ],
                8,
                vec![Plan::Run, Plan::DuplicateOf(0), Plan::Run],
            ),
            (
                "same args, different tool, is not a duplicate",
                vec![call("1", "a", "{}"), call("2", "b", "{}")],
                8,
                vec![Plan::Run, Plan::Run],
            ),
            (
                "the cap counts unique calls, the rest are skipped",
                vec![call("1", "a", "1"), call("2", "a", "1"), call("3", "a", "2"), call("4", "a", "3")],
                2,
                vec![Plan::Run, Plan::DuplicateOf(0), Plan::Run, Plan::OverCap],
            ),
        ];
        for (name, calls, cap, expected) in cases {
            assert_eq!(plan_round(&calls, cap, never), expected, "{name}");
        }
    }

    #[test]
    fn a_control_taking_tool_must_be_alone() {
        let control = |n: &str| n == "research";
        let alone = [call("1", "research", "{}")];
        assert_eq!(plan_round(&alone, 8, control), vec![Plan::Run]);
        let doubled = [call("1", "research", "{}"), call("2", "research", "{}")];
        assert_eq!(plan_round(&doubled, 8, control), vec![Plan::Run, Plan::DuplicateOf(0)]);
        let batched = [call("1", "a", "{}"), call("2", "research", "{}")];
        let plans = plan_round(&batched, 8, control);
        assert!(plans.iter().all(|p| *p == Plan::NotAlone { control_tool: "research".into() }));
    }
}
