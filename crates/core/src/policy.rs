//! Which tools a request offers, and how they are forced. Pure: no I/O, table-tested.

use crate::vocab::{ApprovalPolicy, ToolDef};
use std::collections::{BTreeSet, HashMap};

/// Tool settings of the person as administrator of their own app (apply to every chat).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolSettings {
    /// Never offered.
    pub disabled: BTreeSet<String>,
    /// Approval policy overrides by tool name.
    pub approval: HashMap<String, ApprovalPolicy>,
    /// Tools the person exempted from the egress check: they may send data to new
    /// destinations after untrusted content without the question.
    pub egress_exempt: BTreeSet<String>,
}

/// The per-turn and per-chat choices that shape the toolset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection<'a> {
    /// `false`: no tools this turn.
    pub use_tools: bool,
    /// Tools the person forced for this turn (first iteration only).
    pub forced: &'a [String],
    /// Tools disabled for this chat.
    pub disabled_for_chat: &'a BTreeSet<String>,
    /// Settings-wide tool settings.
    pub settings: &'a ToolSettings,
    /// 1-based iteration.
    pub iteration: u32,
}

/// How the request must use the offered tools (registry names; the loop maps them for providers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forcing {
    /// The model decides.
    Auto,
    /// Tools off.
    None,
    /// Must call this tool.
    One(String),
    /// Must call one of the offered tools (all of them forced).
    AnyOf(Vec<String>),
}

/// The toolset of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Registry names, in registry order.
    pub tools: Vec<String>,
    /// Forcing.
    pub forcing: Forcing,
    /// Forced tools that cannot be offered, with the reason (shown as a notice once).
    pub unavailable: Vec<(String, &'static str)>,
}

impl Offer {
    /// No tools.
    pub fn none() -> Self {
        Offer { tools: Vec::new(), forcing: Forcing::None, unavailable: Vec::new() }
    }
}

/// Decides the toolset, in the brief's order: tools off; disabled in settings; disabled for this
/// chat; exclusive tools only when forced, and then alone; forced tools in the first iteration.
pub fn offer<'d>(defs: impl IntoIterator<Item = &'d ToolDef>, sel: &Selection<'_>) -> Offer {
    if !sel.use_tools {
        return Offer::none();
    }
    let mut enabled = Vec::new();
    let mut unavailable = Vec::new();
    let mut known = BTreeSet::new();
    for def in defs {
        known.insert(def.name.as_str().to_owned());
        let forced = sel.forced.contains(&def.name);
        if sel.settings.disabled.contains(&def.name) {
            if forced {
                unavailable.push((def.name.clone(), "disabled in Settings"));
            }
            continue;
        }
        if sel.disabled_for_chat.contains(&def.name) {
            if forced {
                unavailable.push((def.name.clone(), "disabled for this chat"));
            }
            continue;
        }
        enabled.push(def);
    }
    for name in sel.forced {
        if !known.contains(name) {
            unavailable.push((name.clone(), "not available"));
        }
    }

    // A forced exclusive tool owns the whole turn: it is the only tool of every iteration.
    let forced_exclusive = enabled.iter().find(|d| d.exclusive && sel.forced.contains(&d.name));
    if let Some(def) = forced_exclusive {
        let forcing = if sel.iteration == 1 { Forcing::One(def.name.clone()) } else { Forcing::Auto };
        return Offer { tools: vec![def.name.clone()], forcing, unavailable };
    }

    let forced: Vec<String> = enabled.iter().filter(|d| sel.forced.contains(&d.name)).map(|d| d.name.clone()).collect();
    if sel.iteration == 1 && !forced.is_empty() {
        let forcing = match forced.as_slice() {
            [one] => Forcing::One(one.clone()),
            _ => Forcing::AnyOf(forced.clone()),
        };
        return Offer { tools: forced, forcing, unavailable };
    }

    let tools: Vec<String> = enabled.iter().filter(|d| !d.exclusive).map(|d| d.name.clone()).collect();
    if tools.is_empty() {
        return Offer { unavailable, ..Offer::none() };
    }
    Offer { tools, forcing: Forcing::Auto, unavailable }
}

/// The effective approval policy of a tool: settings override, else the tool's default.
pub fn approval_for(def: &ToolDef, settings: &ToolSettings) -> ApprovalPolicy {
    settings.approval.get(&def.name).copied().unwrap_or(def.approval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str, exclusive: bool) -> ToolDef {
        let mut d = ToolDef::new(name, "d", json!({"type": "object"}));
        d.exclusive = exclusive;
        d
    }

    fn s(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    struct Case {
        name: &'static str,
        use_tools: bool,
        forced: &'static [&'static str],
        chat_disabled: &'static [&'static str],
        settings_disabled: &'static [&'static str],
        iteration: u32,
        tools: &'static [&'static str],
        forcing: Forcing,
        unavailable: &'static [&'static str],
    }

    #[test]
    fn offers_follow_the_policy_order() {
        let defs = [def("a", false), def("b", false), def("c", false), def("x", true)];
        let cases = [
            Case {
                name: "default offers every non-exclusive tool with auto",
                use_tools: true,
                forced: &[],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 1,
                tools: &["a", "b", "c"],
                forcing: Forcing::Auto,
                unavailable: &[],
            },
            Case {
                name: "use_tools off offers nothing, even forced tools",
                use_tools: false,
                forced: &["a"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 1,
                tools: &[],
                forcing: Forcing::None,
                unavailable: &[],
            },
            Case {
                name: "settings-disabled and chat-disabled are never offered",
                use_tools: true,
                forced: &[],
                chat_disabled: &["b"],
                settings_disabled: &["a"],
                iteration: 1,
                tools: &["c"],
                forcing: Forcing::Auto,
                unavailable: &[],
            },
            Case {
                name: "one forced tool: offered alone and named in iteration 1",
                use_tools: true,
                forced: &["b"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 1,
                tools: &["b"],
                forcing: Forcing::One("b".into()),
                unavailable: &[],
            },
            Case {
                name: "several forced tools: must call one of them",
                use_tools: true,
                forced: &["c", "a"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 1,
                tools: &["a", "c"],
                forcing: Forcing::AnyOf(s(&["a", "c"])),
                unavailable: &[],
            },
            Case {
                name: "forcing applies to the first iteration only",
                use_tools: true,
                forced: &["b"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 2,
                tools: &["a", "b", "c"],
                forcing: Forcing::Auto,
                unavailable: &[],
            },
            Case {
                name: "a forced tool disabled for the chat is reported, the rest offered",
                use_tools: true,
                forced: &["b"],
                chat_disabled: &["b"],
                settings_disabled: &[],
                iteration: 1,
                tools: &["a", "c"],
                forcing: Forcing::Auto,
                unavailable: &["b"],
            },
            Case {
                name: "a forced unknown tool is reported",
                use_tools: true,
                forced: &["nope"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 1,
                tools: &["a", "b", "c"],
                forcing: Forcing::Auto,
                unavailable: &["nope"],
            },
            Case {
                name: "a forced exclusive tool is offered alone",
                use_tools: true,
                forced: &["a", "x"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 1,
                tools: &["x"],
                forcing: Forcing::One("x".into()),
                unavailable: &[],
            },
            Case {
                name: "a forced exclusive tool stays alone in later iterations",
                use_tools: true,
                forced: &["x"],
                chat_disabled: &[],
                settings_disabled: &[],
                iteration: 3,
                tools: &["x"],
                forcing: Forcing::Auto,
                unavailable: &[],
            },
            Case {
                name: "a settings-disabled exclusive tool cannot be forced",
                use_tools: true,
                forced: &["x"],
                chat_disabled: &[],
                settings_disabled: &["x"],
                iteration: 1,
                tools: &["a", "b", "c"],
                forcing: Forcing::Auto,
                unavailable: &["x"],
            },
            Case {
                name: "everything disabled offers nothing",
                use_tools: true,
                forced: &[],
                chat_disabled: &["a", "b"],
                settings_disabled: &["c"],
                iteration: 1,
                tools: &[],
                forcing: Forcing::None,
                unavailable: &[],
            },
        ];
        for case in cases {
            let forced = s(case.forced);
            let chat: BTreeSet<String> = s(case.chat_disabled).into_iter().collect();
            let settings =
                ToolSettings { disabled: s(case.settings_disabled).into_iter().collect(), ..Default::default() };
            let sel = Selection {
                use_tools: case.use_tools,
                forced: &forced,
                disabled_for_chat: &chat,
                settings: &settings,
                iteration: case.iteration,
            };
            let offer = offer(&defs, &sel);
            assert_eq!(offer.tools, s(case.tools), "{}: tools", case.name);
            assert_eq!(offer.forcing, case.forcing, "{}: forcing", case.name);
            let unavailable: Vec<&str> = offer.unavailable.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(unavailable, case.unavailable, "{}: unavailable", case.name);
        }
    }

    #[test]
    fn settings_override_the_default_approval() {
        let mut d = def("shell", false);
        d.approval = ApprovalPolicy::Ask;
        let mut settings = ToolSettings::default();
        assert_eq!(approval_for(&d, &settings), ApprovalPolicy::Ask);
        settings.approval.insert("shell".into(), ApprovalPolicy::Deny);
        assert_eq!(approval_for(&d, &settings), ApprovalPolicy::Deny);
    }
}
