//! Which catalogue keys may describe a model: the name the person typed, as the serving API and
//! address call it, turned into LiteLLM's keys (`gpt-4o`, `gemini/gemini-2.5-flash`,
//! `deepseek/deepseek-chat`), most specific first.
//!
//! Invariant: pure; every candidate is lower-case (the catalogue's keys are stored lower-case).

/// LiteLLM's key prefix for the models a host serves (`""`: bare names, as OpenAI's and
/// Anthropic's are keyed).
fn host_prefix(kind: &str, host: &str) -> Option<&'static str> {
    match kind {
        "anthropic" => return Some(""),
        "gemini" => return Some("gemini/"),
        _ => {}
    }
    const HOSTS: &[(&str, &str)] = &[
        ("api.openai.com", ""),
        ("api.anthropic.com", ""),
        ("generativelanguage.googleapis.com", "gemini/"),
        ("api.deepseek.com", "deepseek/"),
        ("api.mistral.ai", "mistral/"),
        ("api.groq.com", "groq/"),
        ("api.x.ai", "xai/"),
        ("api.together.xyz", "together_ai/"),
        ("api.fireworks.ai", "fireworks_ai/"),
        ("api.perplexity.ai", "perplexity/"),
        ("api.deepinfra.com", "deepinfra/"),
        ("api.cerebras.ai", "cerebras/"),
    ];
    HOSTS.iter().find(|(h, _)| host == *h || host.ends_with(&format!(".{h}"))).map(|&(_, p)| p)
}

/// LiteLLM's prefix for a vendor as routers name it (`anthropic/claude-…` at OpenRouter).
fn vendor_prefix(vendor: &str) -> Option<&'static str> {
    Some(match vendor {
        "openai" => "",
        "anthropic" => "",
        "google" => "gemini/",
        "deepseek" => "deepseek/",
        "mistralai" | "mistral" => "mistral/",
        "x-ai" | "xai" => "xai/",
        _ => return None,
    })
}

/// `name` without a trailing release date (`-20250929`, `-2024-08-06`), if it has one.
fn undated(name: &str) -> Option<&str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, tail)) = name.rsplit_once('-')
        && tail.len() == 8
        && digits(tail)
    {
        return Some(head);
    }
    let mut parts = name.rsplitn(4, '-');
    let (d, m, y, head) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    (d.len() == 2 && m.len() == 2 && y.len() == 4 && digits(d) && digits(m) && digits(y)).then_some(head)
}

/// The host of `base_url` (`https://api.openai.com/v1` → `api.openai.com`).
fn host(base_url: &str) -> String {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or(authority)
    } else {
        authority.split(':').next().unwrap_or(authority)
    };
    host.to_ascii_lowercase()
}

/// Catalogue keys to try for `model` served by `kind` at `base_url`, most specific first.
pub(crate) fn candidates(kind: &str, base_url: &str, model: &str) -> Vec<String> {
    let name = model.trim().to_ascii_lowercase();
    let name = name.strip_prefix("models/").unwrap_or(&name).to_owned();
    let host = host(base_url);
    let mut out: Vec<String> = Vec::new();
    let mut push = |prefix: &str, name: &str| {
        for n in [Some(name), undated(name)].into_iter().flatten() {
            let key = format!("{prefix}{n}");
            if !out.contains(&key) {
                out.push(key);
            }
        }
    };
    if let Some(prefix) = host_prefix(kind, &host) {
        push(prefix, &name);
        if !prefix.is_empty() {
            // Some of a provider's models are keyed bare (`gemini-flash-latest`).
            push("", &name);
        }
    }
    // Routers (OpenRouter, Together) name a model `vendor/model`.
    if let Some((vendor, rest)) = name.split_once('/')
        && let Some(prefix) = vendor_prefix(vendor)
    {
        push(prefix, rest);
    }
    // Ollama names carry a tag (`llama3.1:8b`); its catalogue keys mostly do not.
    if host == "localhost" || host == "127.0.0.1" || host == "[::1]" {
        push("ollama/", &name);
        if let Some((base, _tag)) = name.split_once(':') {
            push("ollama/", base);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_the_keys_of_the_api_that_serves_them() {
        assert_eq!(candidates("openai", "https://api.openai.com/v1", "GPT-4o")[0], "gpt-4o");
        assert_eq!(
            candidates("gemini", "https://generativelanguage.googleapis.com/v1beta", "models/gemini-2.5-flash")[0],
            "gemini/gemini-2.5-flash"
        );
        assert_eq!(candidates("openai", "https://api.deepseek.com", "deepseek-chat")[0], "deepseek/deepseek-chat");
        let routed = candidates("openai", "https://openrouter.ai/api/v1", "google/gemini-2.5-flash");
        assert!(routed.contains(&"gemini/gemini-2.5-flash".to_owned()), "{routed:?}");
        let local = candidates("openai", "http://localhost:11434/v1", "llama3.1:8b");
        assert!(local.contains(&"ollama/llama3.1".to_owned()), "{local:?}");
    }

    #[test]
    fn a_release_date_is_tried_without_it_too() {
        let c = candidates("anthropic", "https://api.anthropic.com/v1", "claude-sonnet-9-20991231");
        assert_eq!(c, ["claude-sonnet-9-20991231", "claude-sonnet-9"]);
        assert_eq!(undated("gpt-4o-2024-08-06"), Some("gpt-4o"));
        assert_eq!(undated("gpt-4o"), None);
        assert_eq!(undated("o3-mini"), None);
    }

    #[test]
    fn an_unknown_server_gets_no_guess_from_bare_names() {
        assert!(candidates("openai", "https://llm.example.com/v1", "gpt-4o").is_empty());
        assert_eq!(host("https://user:pw@Example.com:8443/v1?x"), "example.com");
        assert_eq!(host("http://[::1]:8080/v1"), "[::1]");
    }
}
