//! Bounded catalogues: how many tools, and how many bytes of tool definitions, one request may
//! carry, which enabled tools get the direct places when more are enabled than fit, and the
//! built-in `find_tools` step through which the model reaches the rest. Pure: no I/O,
//! table-tested.
//!
//! Invariant: a request never carries more than [`ToolLimits::max_tools`] tools nor more than
//! [`ToolLimits::max_schema_bytes`] bytes of definitions ([`definition_bytes`]), `find_tools`
//! included; and no single tool's definition is over [`MAX_TOOL_DEFINITION_BYTES`] (the
//! registry refuses it), so one tool can never take the whole budget.
//!
//! Who gets the direct places when the enabled tools do not all fit (see [`fit`]), in this order,
//! each group in the order given, a tool too large for the bytes left skipped for the next:
//! 1. the tools the person forced this turn;
//! 2. the tools `find_tools` found this turn, the latest search first;
//! 3. the tools that ran for the model earlier in the conversation (not as an error), the
//!    latest first;
//! 4. the built-in tools;
//! 5. everything else, in registry order (by name).
//!
//! One place and [`FIND_TOOLS_BYTES`] of the budget are kept for `find_tools` itself.

use crate::vocab::{ToolDef, ToolSource};
use serde_json::{Value, json};

/// The name of the built-in tool-search step. Reserved: the registry refuses a tool of this name
/// from any source, so it can never be taken over.
pub const FIND_TOOLS: &str = "find_tools";

/// The most tools one `find_tools` call adds to the offer.
pub const FOUND_PER_CALL: usize = 5;

/// The largest definition of one tool (name, description and serialized parameters schema),
/// in bytes: 32 KiB, about 8,000 tokens. The largest real tool definitions we know of (big MCP
/// servers' and REST operations with large bodies) are a few KiB; a definition this size is
/// either generated or hostile, and would take a quarter of the request budget on its own.
pub const MAX_TOOL_DEFINITION_BYTES: usize = 32 * 1024;

/// The bytes of tool definitions one request may carry: 128 KiB, about 32,000 tokens at four
/// bytes a token, a quarter of a 128k-token context window, so the conversation keeps the rest.
/// 128 tools of an ordinary size (about 1 KiB each) fit in it.
pub const MAX_REQUEST_SCHEMA_BYTES: usize = 128 * 1024;

/// What the budget keeps for the `find_tools` definition (its real size is well under this).
pub const FIND_TOOLS_BYTES: usize = 1024;

/// The catalogue bounds of one provider API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolLimits {
    /// The most tools one request may offer (the API's documented maximum).
    pub max_tools: usize,
    /// The most bytes of tool definitions one request may carry ([`definition_bytes`] summed).
    pub max_schema_bytes: usize,
}

impl Default for ToolLimits {
    /// 128 tools (the maximum OpenAI documents, and no API documents more) and
    /// [`MAX_REQUEST_SCHEMA_BYTES`].
    fn default() -> Self {
        ToolLimits { max_tools: 128, max_schema_bytes: MAX_REQUEST_SCHEMA_BYTES }
    }
}

/// The bytes a definition takes in a request: its name, its description and its serialized
/// parameters schema.
pub fn definition_bytes(def: &ToolDef) -> usize {
    def.name.len() + def.description.len() + serde_json::to_string(&def.parameters).map_or(usize::MAX, |s| s.len())
}

/// The definition of `find_tools`, as offered in place of the tools that did not fit.
pub fn find_tools_def(not_offered: usize) -> ToolDef {
    ToolDef::new(
        FIND_TOOLS,
        format!(
            "Finds tools by what they do. {not_offered} more tools are enabled than this request can carry; \
             describe what you need in a few words and the best matches (at most {FOUND_PER_CALL}) are offered \
             to you from the next step on."
        ),
        json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What the tool should do, in a few words."}},
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// The toolset that fits one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fitted {
    /// The tools offered directly, in the order of the input offer.
    pub direct: Vec<String>,
    /// Whether `find_tools` is offered too (some enabled tools did not fit).
    pub find_tools: bool,
}

/// What [`fit`] needs to know of one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its [`definition_bytes`].
    pub bytes: usize,
    /// Whether it is built in.
    pub builtin: bool,
}

impl Candidate {
    /// The candidate `def` is (measured now; the registry keeps it measured once).
    pub fn of(def: &ToolDef) -> Self {
        Candidate { bytes: definition_bytes(def), builtin: def.source == ToolSource::Builtin }
    }
}

/// The tools of one request's `offer` (registry names, in registry order) that fit `limits`,
/// by the order of precedence in the module docs. `forced`, `found` and `used` are names in
/// their own precedence order (the latest first); `candidate` looks a tool up. `search` says
/// whether the rest may be reached through `find_tools` (not when the request forces a choice).
pub fn fit(
    offer: &[String],
    candidate: impl Fn(&str) -> Option<Candidate>,
    precedence: [&[String]; 3],
    limits: ToolLimits,
    search: bool,
) -> Fitted {
    let found: Vec<Option<Candidate>> = offer.iter().map(|n| candidate(n)).collect();
    let sizes: Vec<usize> = found.iter().map(|c| c.map_or(usize::MAX, |c| c.bytes)).collect();
    let total = sizes.iter().fold(0usize, |a, b| a.saturating_add(*b));
    if offer.len() <= limits.max_tools && total <= limits.max_schema_bytes {
        return Fitted { direct: offer.to_vec(), find_tools: false };
    }
    let (mut places, mut bytes) = (limits.max_tools, limits.max_schema_bytes);
    if search {
        places = places.saturating_sub(1);
        bytes = bytes.saturating_sub(FIND_TOOLS_BYTES);
    }
    let position = |name: &str| offer.iter().position(|n| n == name);
    let builtins: Vec<usize> = (0..offer.len()).filter(|&i| found[i].is_some_and(|c| c.builtin)).collect();
    let order = precedence
        .iter()
        .flat_map(|names| names.iter().filter_map(|n| position(n)))
        .chain(builtins)
        .chain(0..offer.len());
    let mut taken = vec![false; offer.len()];
    let mut count = 0;
    for i in order {
        if count == places {
            break;
        }
        if taken[i] || sizes[i] > bytes {
            continue;
        }
        taken[i] = true;
        count += 1;
        bytes -= sizes[i];
    }
    let direct = offer.iter().zip(&taken).filter(|(_, t)| **t).map(|(n, _)| n.clone()).collect();
    Fitted { direct, find_tools: search }
}

/// Lower-case words of `text`: runs of letters and digits (`server__list_issues` is `server`,
/// `list`, `issues`).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// The tools among `candidates` that best match `query`, at most [`FOUND_PER_CALL`], the best
/// first. Scoring is lexical and deterministic: for each word of the query, 3 when a word of the
/// name is it, else 2 when the name contains it (words of three letters or more), plus 1 when a
/// word of the description is it.
/// Ties keep the candidates' order; a tool scoring 0 is never returned.
pub fn search<'d>(query: &str, candidates: impl IntoIterator<Item = &'d ToolDef>) -> Vec<&'d ToolDef> {
    let terms = words(query);
    if terms.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, usize, &ToolDef)> = Vec::new();
    for (i, def) in candidates.into_iter().enumerate() {
        let name = def.name.to_lowercase();
        let name_words = words(&def.name);
        let description_words = words(&def.description);
        let score: usize = terms
            .iter()
            .map(|t| {
                let in_name = if name_words.contains(t) {
                    3
                } else if t.len() >= 3 && name.contains(t.as_str()) {
                    2
                } else {
                    0
                };
                in_name + usize::from(description_words.contains(t))
            })
            .sum();
        if score > 0 {
            scored.push((score, i, def));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(FOUND_PER_CALL).map(|(_, _, d)| d).collect()
}

/// What `find_tools` answers: the tools found, each with the start of its description.
pub fn describe_found(query: &str, found: &[&ToolDef], not_offered: usize) -> String {
    if found.is_empty() {
        return format!(
            "No tool matches '{query}' among the {not_offered} tools not offered directly. Try other words (what the tool does, or the name of its server)."
        );
    }
    let mut text =
        format!("Found {} tools; call them from your next step on (they are offered from then):", found.len());
    for def in found {
        let short: String = def.description.chars().take(200).collect();
        let short = short.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!("\n- {}: {short}", def.name));
    }
    text
}

/// The arguments of a `find_tools` call: its query, or what is wrong with them.
pub fn query_of(args: &Value) -> Result<&str, String> {
    match args.get("query").and_then(Value::as_str).map(str::trim) {
        Some(q) if !q.is_empty() => Ok(q),
        _ => Err("Invalid arguments for 'find_tools': field `query` must be a non-empty string saying what the tool should do. Call it again.".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn def(name: &str, description: &str, builtin: bool, padding: usize) -> ToolDef {
        let mut d = ToolDef::new(name, description, json!({"type": "object", "description": "x".repeat(padding)}));
        d.source = if builtin { ToolSource::Builtin } else { ToolSource::Mcp { server: "s".into() } };
        d
    }

    fn s(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    struct Case {
        name: &'static str,
        max_tools: usize,
        max_bytes: usize,
        forced: &'static [&'static str],
        found: &'static [&'static str],
        used: &'static [&'static str],
        search: bool,
        direct: &'static [&'static str],
        find_tools: bool,
    }

    #[test]
    fn the_direct_places_follow_the_stated_precedence() {
        // a..e from a server, t a built-in; "big" is large.
        let defs: BTreeMap<String, ToolDef> = [
            def("a", "", false, 0),
            def("b", "", false, 0),
            def("big", "", false, 2000),
            def("c", "", false, 0),
            def("d", "", false, 0),
            def("t", "", true, 0),
        ]
        .into_iter()
        .map(|d| (d.name.clone(), d))
        .collect();
        let offer: Vec<String> = defs.keys().cloned().collect();
        let small = definition_bytes(&defs["a"]);
        let roomy = 1_000_000;
        let cases = [
            Case {
                name: "everything fits: unchanged, no find_tools",
                max_tools: 6,
                max_bytes: roomy,
                forced: &[],
                found: &[],
                used: &[],
                search: true,
                direct: &["a", "b", "big", "c", "d", "t"],
                find_tools: false,
            },
            Case {
                name: "too many: built-ins first, then registry order, one place kept for find_tools",
                max_tools: 4,
                max_bytes: roomy,
                forced: &[],
                found: &[],
                used: &[],
                search: true,
                direct: &["a", "b", "t"],
                find_tools: true,
            },
            Case {
                name: "forced before found before used before built-ins",
                max_tools: 4,
                max_bytes: roomy,
                forced: &["d"],
                found: &["c"],
                used: &["b"],
                search: true,
                direct: &["b", "c", "d"],
                find_tools: true,
            },
            Case {
                name: "found tools, the latest first, take places before used ones",
                max_tools: 3,
                max_bytes: roomy,
                forced: &[],
                found: &["d", "c"],
                used: &["a"],
                search: true,
                direct: &["c", "d"],
                find_tools: true,
            },
            Case {
                name: "over the byte budget: a tool too large is skipped for smaller ones",
                max_tools: 10,
                max_bytes: FIND_TOOLS_BYTES + 4 * small,
                forced: &[],
                found: &["big"],
                used: &[],
                search: true,
                direct: &["a", "b", "c", "t"],
                find_tools: true,
            },
            Case {
                name: "a forced choice gets no find_tools and keeps every place",
                max_tools: 2,
                max_bytes: roomy,
                forced: &["c", "d", "a"],
                found: &[],
                used: &[],
                search: false,
                direct: &["c", "d"],
                find_tools: false,
            },
        ];
        for case in cases {
            let limits = ToolLimits { max_tools: case.max_tools, max_schema_bytes: case.max_bytes };
            let (forced, found, used) = (s(case.forced), s(case.found), s(case.used));
            let fitted = fit(&offer, |n| defs.get(n).map(Candidate::of), [&forced, &found, &used], limits, case.search);
            assert_eq!(fitted.direct, s(case.direct), "{}: direct", case.name);
            assert_eq!(fitted.find_tools, case.find_tools, "{}: find_tools", case.name);
            let places = fitted.direct.len() + usize::from(fitted.find_tools);
            assert!(places <= case.max_tools, "{}: {places} places", case.name);
            let bytes: usize = fitted.direct.iter().map(|n| definition_bytes(&defs[n])).sum::<usize>()
                + if fitted.find_tools { FIND_TOOLS_BYTES } else { 0 };
            assert!(bytes <= case.max_bytes, "{}: {bytes} bytes", case.name);
        }
    }

    #[test]
    fn find_tools_own_definition_fits_the_room_kept_for_it() {
        assert!(definition_bytes(&find_tools_def(usize::MAX)) <= FIND_TOOLS_BYTES);
    }

    #[test]
    fn search_ranks_by_name_then_description_and_is_deterministic() {
        let defs = [
            def("files__read_file", "Reads a file from disk", false, 0),
            def("github__list_issues", "Lists the issues of a repository", false, 0),
            def("github__create_issue", "Opens an issue", false, 0),
            def("weather__forecast", "The weather for a city; mentions issues", false, 0),
            def("calendar__events", "Lists events", false, 0),
        ];
        let names = |q: &str| search(q, &defs).iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        assert_eq!(names("issues"), ["github__list_issues", "weather__forecast"]);
        assert_eq!(names("issue"), ["github__create_issue", "github__list_issues"]);
        assert_eq!(names("read a file")[0], "files__read_file");
        assert_eq!(names("GitHub"), ["github__list_issues", "github__create_issue"]);
        assert!(names("zebra").is_empty());
        assert!(names("  ").is_empty());
        let many: Vec<ToolDef> = (0..20).map(|i| def(&format!("t{i:02}__thing"), "", false, 0)).collect();
        let found = search("thing", &many);
        assert_eq!(found.len(), FOUND_PER_CALL);
        assert_eq!(found[0].name, "t00__thing", "ties keep the catalogue's order");
    }
}
