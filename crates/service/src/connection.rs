//! "Test connection": list the models and make one tiny request with one tool, then say in one
//! line what works and what is wrong (the address, `/v1`, the key, the model, tools).

use crate::Error;
use crate::ipc::ConnectionReport;
use futures::StreamExt;
use std::time::Duration;
use switchboard_core::provider::ToolSpec;
use switchboard_core::{
    ErrorKind, GenerationOptions, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolChoice,
};
use switchboard_providers::ProviderKind;
use switchboard_store::ProviderProfile;

/// The listing and the tiny request each get this long.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// Enough output for "OK" or a call, even from a model that thinks a little first.
const TINY_OUTPUT_TOKENS: u32 = 64;

/// A report that ends at a failure; `transport` is the error's technical detail, if it had one.
fn failed(summary: String, error: &Error, transport: Option<String>, report: ConnectionReport) -> ConnectionReport {
    // The server's own words, and what the transport said, for "Details".
    let detail = match transport {
        Some(t) if error.message != summary => format!("{}\n{t}", error.message),
        Some(t) => t,
        None => error.message.clone(),
    };
    ConnectionReport {
        ok: false,
        summary,
        error_kind: Some(error.kind),
        detail: Some(detail),
        key_accepted: match error.kind {
            ErrorKind::Auth => Some(false),
            _ => report.key_accepted,
        },
        ..report
    }
}

/// What to say about a failure, in one line with what to do.
fn say(error: &Error, profile: &ProviderProfile, kind: &ProviderKind, step: &str) -> String {
    let host = crate::confirm::origin(&profile.base_url).unwrap_or_else(|| profile.base_url.clone());
    let host = host.split("://").nth(1).unwrap_or(&host).to_owned();
    match error.kind {
        ErrorKind::Network => format!("Couldn't connect to {host} — is the server running, and is the address right?"),
        ErrorKind::Timeout => format!("{host} did not answer within {} s.", STEP_TIMEOUT.as_secs()),
        ErrorKind::Auth => format!(
            "The key was refused. Set the key of '{}' in Keys (or {}), then test again.",
            profile.name, kind.key_env
        ),
        ErrorKind::NotFound
            if step == "models"
                && kind.default_base_url.ends_with("/v1")
                && !profile.base_url.trim_end_matches('/').ends_with("/v1") =>
        {
            format!(
                "Nothing answers at {}/models — the base URL probably needs /v1 at the end.",
                profile.base_url.trim_end_matches('/')
            )
        }
        ErrorKind::NotFound if step == "models" => {
            format!("{host} has no {} model listing there — check the base URL and the API kind.", kind.label)
        }
        ErrorKind::NotFound => format!(
            "The model '{}' does not exist at this provider — pick one from its list.",
            profile.model.as_deref().unwrap_or_default()
        ),
        ErrorKind::Protocol => {
            format!("{host} answered, but not as the {} API — check the base URL and the kind.", kind.label)
        }
        _ => error.message.clone(),
    }
}

/// The API a well-known host speaks, when the profile names another kind: the likeliest cause
/// of a 401 or 404 there is a profile of the wrong kind, which the error alone does not say.
fn wrong_kind(profile: &ProviderProfile, kind: &ProviderKind) -> Option<String> {
    let url = url::Url::parse(profile.base_url.trim()).ok()?;
    let host = url.host_str()?;
    let (speaks, label) = match host {
        "api.anthropic.com" => ("anthropic", "Anthropic (Claude)"),
        // Google also serves an OpenAI-compatible API under /openai.
        "generativelanguage.googleapis.com" if !url.path().contains("/openai") => ("gemini", "Google Gemini"),
        "api.openai.com" => ("openai", "OpenAI"),
        _ => return None,
    };
    let same = kind.id == speaks || (speaks == "openai" && kind.id == "openai-responses");
    (!same).then(|| {
        format!("{host} speaks the {label} API, but this profile is of kind '{}' — pick the {label} kind.", kind.id)
    })
}

/// A local server found on its default port.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DetectedServer {
    /// The preset it matches (`ollama`, `lmstudio`).
    pub preset: String,
    /// What to call it.
    pub label: String,
    /// Where it answered.
    pub base_url: String,
    /// The models it lists.
    pub models: Vec<String>,
    /// The name of a profile that already points there, if any.
    pub profile: Option<String>,
}

/// How long a local server may take to list its models.
const DETECT_TIMEOUT: Duration = Duration::from_millis(1500);

impl crate::Service {
    /// Looks for Ollama and LM Studio on their default ports (nothing leaves the machine).
    pub async fn detect_local_servers(&self) -> crate::Result<Vec<DetectedServer>> {
        let candidates: Vec<(String, String)> =
            switchboard_providers::presets::local().map(|p| (p.id.to_owned(), p.base_url.to_owned())).collect();
        self.detect_servers(&candidates).await
    }

    /// [`Self::detect_local_servers`] over `(preset id, base URL)` pairs: those that list their
    /// models within a moment, in the order given.
    pub async fn detect_servers(&self, candidates: &[(String, String)]) -> crate::Result<Vec<DetectedServer>> {
        let profiles = &self.inner.store.providers()?;
        let probes = candidates.iter().map(|(id, url)| async move {
            let provider = switchboard_providers::OpenAiChat::new(switchboard_providers::OpenAiConfig {
                base_url: url.clone(),
                api_key: None,
            })
            .ok()?;
            let models = tokio::time::timeout(DETECT_TIMEOUT, provider.list_models()).await.ok()?.ok()?;
            let label = switchboard_providers::PRESETS.iter().find(|p| p.id == id).map_or(id.as_str(), |p| p.label);
            let same = |p: &ProviderProfile| p.base_url.trim_end_matches('/') == url.trim_end_matches('/');
            Some(DetectedServer {
                preset: id.clone(),
                label: label.to_owned(),
                base_url: url.clone(),
                models,
                profile: profiles.iter().find(|p| same(p)).map(|p| p.name.clone()),
            })
        });
        Ok(futures::future::join_all(probes).await.into_iter().flatten().collect())
    }
}

/// Runs the test. Never fails: every failure is the report's answer.
pub(crate) async fn test(
    profile: &ProviderProfile,
    kind: &ProviderKind,
    provider: &dyn Provider,
    redact: &(dyn Fn(ProviderError) -> Error + Sync),
) -> ConnectionReport {
    let mut report = ConnectionReport {
        ok: false,
        summary: String::new(),
        key_accepted: None,
        models: None,
        model_listed: None,
        tools: None,
        error_kind: None,
        detail: None,
    };
    let timeout = |what: &str| {
        ProviderError::new(ErrorKind::Timeout, format!("The {what} took longer than {} s.", STEP_TIMEOUT.as_secs()))
    };

    if kind.capabilities.lists_models {
        let listed = tokio::time::timeout(STEP_TIMEOUT, provider.list_model_infos()).await;
        match listed.unwrap_or_else(|_| Err(timeout("model listing"))) {
            Ok(models) => {
                report.key_accepted = Some(true);
                report.models = Some(u32::try_from(models.len()).unwrap_or(u32::MAX));
                report.model_listed =
                    profile.model.as_ref().filter(|_| !models.is_empty()).map(|m| models.iter().any(|x| &x.id == m));
            }
            Err(e) => {
                let transport = e.detail.clone().map(|d| redact(ProviderError::new(ErrorKind::Internal, d)).message);
                let e = redact(e);
                let said = wrong_kind(profile, kind).unwrap_or_else(|| say(&e, profile, kind, "models"));
                return failed(said, &e, transport, report);
            }
        }
    }
    let listed = match report.models {
        Some(0) => " but lists no models".to_owned(),
        Some(1) => ", 1 model".to_owned(),
        Some(n) => format!(", {n} models"),
        None => String::new(),
    };
    let Some(model) = profile.model.clone() else {
        report.summary = format!("Connected{listed}. Pick a default model for this profile.");
        return report;
    };

    let mut request = ProviderRequest {
        model: model.clone(),
        system: None,
        messages: vec![Message::user("Reply with the word OK.")],
        tools: vec![ToolSpec {
            name: "connection_check".into(),
            description: "Returns OK. Only here to check that tools are accepted; do not call it.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        }],
        tool_choice: ToolChoice::Auto,
        options: GenerationOptions { max_output_tokens: Some(TINY_OUTPUT_TOKENS), ..Default::default() },
    };
    let mut answer = tiny(provider, request.clone()).await;
    if let Err(e) = &answer
        && e.tools_unsupported
    {
        report.tools = Some(false);
        request.tools.clear();
        request.tool_choice = ToolChoice::None;
        answer = tiny(provider, request).await;
    }
    match answer {
        Ok(()) => {
            report.ok = true;
            report.key_accepted = Some(true);
            let tools = match report.tools {
                Some(false) => "answered, but takes no tools: it will be used without them",
                _ => {
                    report.tools = Some(true);
                    "answered and takes tools"
                }
            };
            let unlisted =
                if report.model_listed == Some(false) { " (it is not in the list, but it works)" } else { "" };
            report.summary = format!("Connected{listed}; '{model}' {tools}{unlisted}.");
        }
        Err(e) => {
            let transport = e.detail.clone().map(|d| redact(ProviderError::new(ErrorKind::Internal, d)).message);
            let e = redact(e);
            let mut said = wrong_kind(profile, kind).unwrap_or_else(|| say(&e, profile, kind, "answer"));
            if e.kind == ErrorKind::NotFound && report.model_listed == Some(false) {
                said = format!(
                    "The model '{model}' is not one of the {} this provider lists — pick one from its list.",
                    report.models.unwrap_or(0)
                );
            }
            return failed(said, &e, transport, report);
        }
    }
    report
}

/// Streams one response to its end; only whether it ended well matters.
async fn tiny(provider: &dyn Provider, request: ProviderRequest) -> Result<(), ProviderError> {
    let run = async {
        let mut stream = provider.stream(request);
        while let Some(item) = stream.next().await {
            if let ProviderEvent::Finish { .. } = item? {
                return Ok(());
            }
        }
        Err(ProviderError::new(ErrorKind::Network, "The answer ended before it was complete."))
    };
    tokio::time::timeout(STEP_TIMEOUT, run).await.unwrap_or_else(|_| {
        Err(ProviderError::new(
            ErrorKind::Timeout,
            format!("The answer took longer than {} s.", STEP_TIMEOUT.as_secs()),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(kind: &str, base_url: &str) -> Option<String> {
        let profile = ProviderProfile {
            name: "p".into(),
            kind: kind.into(),
            base_url: base_url.into(),
            model: None,
            options: Default::default(),
        };
        wrong_kind(&profile, ProviderKind::parse(kind).unwrap())
    }

    #[test]
    fn a_well_known_host_of_another_api_is_named() {
        let said = check("openai", "https://api.anthropic.com/v1").unwrap();
        assert!(said.contains("Anthropic (Claude) API") && said.contains("kind 'openai'"), "{said}");
        assert!(check("anthropic", "https://api.openai.com/v1").unwrap().contains("OpenAI API"));
        assert!(check("openai", "https://generativelanguage.googleapis.com/v1beta").is_some());
        for (kind, url) in [
            ("openai", "https://generativelanguage.googleapis.com/v1beta/openai"),
            ("openai-responses", "https://api.openai.com/v1"),
            ("anthropic", "https://api.anthropic.com/v1"),
            ("openai", "http://localhost:11434/v1"),
        ] {
            assert_eq!(check(kind, url), None, "{kind} {url}");
        }
    }
}
