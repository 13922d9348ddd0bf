//! What a model can do: tools, images, PDFs, reasoning controls.
//!
//! Three sources, strongest first: what the person set on the profile (the service applies
//! that), what the API's model listing says where it says anything ([`ModelInfo`]; OpenRouter's
//! `supported_parameters`, Gemini's `thinking`), and the small table in [`capabilities`], which
//! knows the families whose answer is "no" (a tool-less model would otherwise get a provider
//! error instead of an answer). A model nobody knows is assumed to take tools and reasoning
//! controls the person chose; if the API refuses tools anyway, the loop asks again without them.

pub use switchboard_core::provider::{ModelCapabilities, ModelInfo};

const NONE: Option<bool> = Some(false);
const YES: Option<bool> = Some(true);
const UNKNOWN: Option<bool> = None;

/// One row of [`TABLE`]: `(prefix of the model's own name, tools, images, pdf, reasoning)`.
type Row = (&'static str, Option<bool>, Option<bool>, Option<bool>, Option<bool>);

/// Prefixes of the models that refuse sampling settings (OpenAI's reasoning models).
const NO_SAMPLING: &[&str] = &["o1", "o3", "o4", "gpt-5"];

/// Prefixes of [`NO_SAMPLING`] models that do take them.
const SAMPLING_AFTER_ALL: &[&str] = &["gpt-5-chat"];

/// `(prefix of the model's own name, tools, images, pdf, reasoning)`, first match wins. `pdf` is
/// whether the model reads a PDF sent as a document (Anthropic's document block, OpenAI's file
/// part, Gemini's inline data); the open models behind compatible servers read none. The name is
/// compared lower-case, without a vendor or `models/` prefix (`openai/o1-mini` is `o1-mini`) and
/// without an Ollama tag (`gemma2:9b` is `gemma2`).
const TABLE: &[Row] = &[
    // Not chat models at all.
    ("text-embedding", NONE, NONE, NONE, NONE),
    ("embedding", NONE, NONE, NONE, NONE),
    ("whisper", NONE, NONE, NONE, NONE),
    ("tts", NONE, NONE, NONE, NONE),
    ("dall-e", NONE, NONE, NONE, NONE),
    ("gpt-image", NONE, NONE, NONE, NONE),
    ("omni-moderation", NONE, NONE, NONE, NONE),
    ("text-moderation", NONE, NONE, NONE, NONE),
    ("babbage", NONE, NONE, NONE, NONE),
    ("davinci", NONE, NONE, NONE, NONE),
    ("gpt-3.5-turbo-instruct", NONE, NONE, NONE, NONE),
    ("imagen", NONE, NONE, NONE, NONE),
    ("veo", NONE, NONE, NONE, NONE),
    ("aqa", NONE, NONE, NONE, NONE),
    // OpenAI.
    ("o1-mini", NONE, NONE, NONE, YES),
    ("o1-preview", NONE, NONE, NONE, YES),
    ("o1", YES, YES, YES, YES),
    // o3-mini reads neither images nor PDFs.
    ("o3-mini", YES, NONE, NONE, YES),
    ("o3", YES, YES, YES, YES),
    ("o4", YES, YES, YES, YES),
    ("gpt-5-chat", YES, YES, YES, NONE),
    ("gpt-5", YES, YES, YES, YES),
    ("gpt-4o", YES, YES, YES, NONE),
    ("gpt-4.1", YES, YES, YES, NONE),
    ("gpt-4-turbo", YES, YES, YES, NONE),
    ("gpt-4", YES, NONE, NONE, NONE),
    ("gpt-3.5-turbo", YES, NONE, NONE, NONE),
    // Anthropic: extended thinking from 3.7 on.
    ("claude-3-7", YES, YES, YES, YES),
    ("claude-3", YES, YES, YES, NONE),
    ("claude", YES, YES, YES, YES),
    // Google.
    ("gemini-2.0-flash-thinking", YES, YES, YES, YES),
    ("gemini-1", YES, YES, YES, NONE),
    ("gemini-2.0", YES, YES, YES, NONE),
    ("gemini", YES, YES, YES, YES),
    // Open models served by Ollama, LM Studio, vLLM, OpenRouter.
    ("gemma", NONE, UNKNOWN, NONE, NONE),
    ("llama2", NONE, NONE, NONE, NONE),
    ("codellama", NONE, NONE, NONE, NONE),
    ("tinyllama", NONE, NONE, NONE, NONE),
    ("llava", NONE, YES, NONE, NONE),
    ("starcoder", NONE, NONE, NONE, NONE),
    ("deepseek-coder", NONE, NONE, NONE, NONE),
    ("phi3", NONE, UNKNOWN, NONE, NONE),
    ("deepseek-reasoner", UNKNOWN, NONE, NONE, YES),
    ("deepseek-r1", UNKNOWN, NONE, NONE, YES),
    ("qwq", UNKNOWN, NONE, NONE, YES),
];

/// The model's own name: lower-case, without vendor/`models/` prefix or Ollama tag.
fn own_name(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let last = lower.rsplit('/').next().unwrap_or(&lower);
    last.split(':').next().unwrap_or(last).to_owned()
}

/// What the table knows about `model`. The kind is not needed today (names are distinct across
/// APIs) but is taken so a kind-specific exception stays a one-line change.
pub fn capabilities(_kind: &str, model: &str) -> ModelCapabilities {
    let name = own_name(model);
    let sampling = (NO_SAMPLING.iter().any(|p| name.starts_with(p))
        && !SAMPLING_AFTER_ALL.iter().any(|p| name.starts_with(p)))
    .then_some(false);
    TABLE
        .iter()
        .find(|(prefix, ..)| name.starts_with(prefix))
        .map(|&(_, tools, images, pdf, reasoning)| ModelCapabilities { tools, images, pdf, reasoning, sampling })
        .unwrap_or(ModelCapabilities { sampling, ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(model: &str) -> Option<bool> {
        capabilities("openai", model).tools
    }

    #[test]
    fn the_table_knows_the_families_that_take_no_tools() {
        for model in ["o1-mini", "openai/o1-mini", "gemma2:9b", "gemma3", "llama2:13b", "text-embedding-3-small"] {
            assert_eq!(tools(model), Some(false), "{model}");
        }
        for model in ["gpt-4o-mini", "o3-mini", "gpt-5", "claude-sonnet-4-5", "models/gemini-2.5-flash"] {
            assert_eq!(tools(model), Some(true), "{model}");
        }
        assert_eq!(tools("my-finetune"), None, "unknown is unknown, not no");
        assert_eq!(tools("qwen2.5:7b"), None);
    }

    #[test]
    fn reasoning_controls_are_known_where_a_model_refuses_them() {
        let reasoning = |m: &str| capabilities("any", m).reasoning;
        assert_eq!(reasoning("gpt-4o"), Some(false));
        assert_eq!(reasoning("gpt-5-chat-latest"), Some(false));
        assert_eq!(reasoning("gpt-5-mini"), Some(true));
        assert_eq!(reasoning("claude-3-5-haiku-latest"), Some(false));
        assert_eq!(reasoning("claude-3-7-sonnet-latest"), Some(true));
        assert_eq!(reasoning("claude-opus-4-1"), Some(true));
        assert_eq!(reasoning("gemini-2.0-flash"), Some(false));
        assert_eq!(reasoning("gemini-2.5-pro"), Some(true));
        assert_eq!(reasoning("deepseek-r1:14b"), Some(true));
        let sampling = |m: &str| capabilities("any", m).sampling;
        assert_eq!(
            (sampling("o4-mini"), sampling("gpt-5"), sampling("openai/o3")),
            (Some(false), Some(false), Some(false))
        );
        assert_eq!(
            (sampling("gpt-5-chat-latest"), sampling("gpt-4o"), sampling("claude-opus-4-1")),
            (None, None, None)
        );
    }

    #[test]
    fn the_table_knows_which_families_read_images_and_pdfs() {
        let media = |m: &str| {
            let c = capabilities("any", m);
            (c.images, c.pdf)
        };
        for model in ["gpt-4o-mini", "gpt-5", "o4-mini", "claude-3-5-haiku-latest", "claude-opus-4-1", "gemini-2.5-pro"]
        {
            assert_eq!(media(model), (Some(true), Some(true)), "{model}");
        }
        for model in ["gpt-3.5-turbo", "gpt-4-0613", "o3-mini", "o1-mini", "deepseek-r1:14b"] {
            assert_eq!(media(model), (Some(false), Some(false)), "{model}");
        }
        assert_eq!(media("llava:13b"), (Some(true), Some(false)), "sees images, reads no PDF");
        assert_eq!(media("qwen2.5-vl:7b"), (None, None), "unknown is unknown");
    }

    #[test]
    fn what_a_listing_says_wins_over_the_table() {
        let listed = ModelCapabilities { tools: Some(true), ..Default::default() };
        let table = capabilities("openai", "gemma2");
        assert_eq!(listed.or(table).tools, Some(true));
        assert_eq!(listed.or(table).reasoning, Some(false));
    }
}
