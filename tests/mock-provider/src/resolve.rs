//! Steps that depend on the request, resolved before a reply is encoded: [`Step::Quote`] and
//! [`Step::KeepLines`] become text, and with counted usage every [`Step::Usage`] gets the counts.
//!
//! Invariant: encoders never see a `Quote` or `KeepLines` step, and with counted usage never a
//! scripted count.

use crate::count::{Counted, Prompt, text_tokens};
use crate::script::Step;

/// `steps` answering `prompt`; `counted` is `Some` when usage is counted.
pub(crate) fn steps(steps: Vec<Step>, prompt: &Prompt, counted: Option<Counted>) -> Vec<Step> {
    let mut steps: Vec<Step> = steps
        .into_iter()
        .map(|step| match step {
            Step::Quote { marker } => Step::Text {
                text: matching(prompt, |line| line.starts_with(&marker))
                    .unwrap_or_else(|| format!("no line starts with {marker}")),
            },
            Step::KeepLines { marker } => Step::Text {
                text: matching(prompt, |line| line.contains(&marker))
                    .unwrap_or_else(|| format!("no line contains {marker}")),
            },
            other => other,
        })
        .collect();
    if let Some(counted) = counted {
        let (completion, reasoning) = output_tokens(&steps);
        for step in &mut steps {
            if let Step::Usage { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } = step {
                *prompt_tokens = counted.prompt_tokens;
                *cached_tokens = counted.cached_tokens;
                *completion_tokens = completion;
                *reasoning_tokens = reasoning;
            }
        }
    }
    steps
}

/// The lines of `prompt` (trimmed) that `keep` accepts, each once, in order, joined with
/// newlines; `None` when there is none.
fn matching(prompt: &Prompt, keep: impl Fn(&str) -> bool) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    let lines: Vec<&str> = prompt.lines().map(str::trim).filter(|line| keep(line) && seen.insert(*line)).collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The completion tokens of a reply (its text, reasoning and calls, counted like a prompt's text)
/// and the reasoning tokens among them.
fn output_tokens(steps: &[Step]) -> (u64, u64) {
    let mut completion = 0;
    let mut reasoning = 0;
    for step in steps {
        match step {
            Step::Text { text } => completion += text_tokens(text),
            Step::Reasoning { text } => {
                let tokens = text_tokens(text);
                completion += tokens;
                reasoning += tokens;
            }
            Step::ToolCall { name, arguments, .. } => completion += text_tokens(name) + text_tokens(arguments),
            Step::ParallelToolCalls { calls } => {
                completion += calls.iter().map(|(_, name, args)| text_tokens(name) + text_tokens(args)).sum::<u64>();
            }
            _ => {}
        }
    }
    (completion, reasoning)
}
