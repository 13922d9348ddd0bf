//! Bounded catalogues, driven through the state machine: a turn with more tools enabled than
//! one request may carry offers at most the provider's maximum (`find_tools` included), says so
//! once, and reaches the rest through `find_tools`, whose finds are offered from the next step.

use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use switchboard_core::catalogue::{FIND_TOOLS, MAX_TOOL_DEFINITION_BYTES, ToolLimits, definition_bytes};
use switchboard_core::machine::{Effect, Input, Machine, ToolEnd, ToolFinished};
use switchboard_core::provider::{ProviderRequest, StopReason, ToolChoice};
use switchboard_core::{
    ChatEvent, EngineConfig, Message, NoticeKind, ProviderEvent, RegistryError, Tool, ToolCall, ToolContext, ToolDef,
    ToolError, ToolOutput, ToolRegistry, ToolSource, ToolStatus, TurnInput, TurnOptions, Usage,
};

struct Fake(ToolDef);

impl Tool for Fake {
    fn def(&self) -> &ToolDef {
        &self.0
    }

    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ran")) })
    }
}

/// `n` tools of a server, `srv__tool0000` …, each described by its number; `srv__weather_0042`
/// is the one the model is after.
fn registry(n: usize) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for i in 0..n {
        let name = if i == 42 { "srv__weather_0042".to_owned() } else { format!("srv__tool{i:04}") };
        let description =
            if i == 42 { "The weather forecast for a city.".to_owned() } else { format!("Tool number {i}.") };
        let mut def =
            ToolDef::new(name, description, json!({"type": "object", "properties": {"q": {"type": "string"}}}));
        def.source = ToolSource::Mcp { server: "srv".into() };
        registry.register(Arc::new(Fake(def))).unwrap();
    }
    registry
}

fn input(options: TurnOptions) -> TurnInput {
    TurnInput {
        conversation_id: "c".into(),
        user_message_id: "u".into(),
        message_id: "m".into(),
        provider_name: "p".into(),
        model: "model".into(),
        system_prompt: None,
        history: vec![Message::user("Weather in Oslo?")],
        options,
    }
}

fn step(m: &mut Machine<'_>, input: Input) -> Vec<Effect> {
    let mut out = Vec::new();
    m.handle(input, &mut out);
    out
}

fn request(out: &[Effect]) -> &ProviderRequest {
    out.iter()
        .find_map(|e| match e {
            Effect::StartRequest { request, .. } => Some(request),
            _ => None,
        })
        .expect("a request")
}

fn notices(out: &[Effect]) -> Vec<String> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Emit(ChatEvent::Notice { kind: NoticeKind::TooManyTools, message }) => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn results(out: &[Effect]) -> Vec<(ToolStatus, String)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Emit(ChatEvent::ToolResult { status, output, .. }) => Some((*status, output.clone())),
            _ => None,
        })
        .collect()
}

fn respond_with_call(m: &mut Machine<'_>, id: &str, name: &str, args: &str) -> Vec<Effect> {
    let call = ToolCall { id: id.into(), name: name.into(), arguments: args.into() };
    step(m, Input::Stream(Ok(ProviderEvent::ToolCall { call, text_chars_before: 0 })));
    step(m, Input::Stream(Ok(ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: None })))
}

fn schema_bytes(request: &ProviderRequest) -> usize {
    request.tools.iter().map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len()).sum()
}

#[test]
fn over_the_limit_a_request_carries_the_maximum_and_find_tools_reaches_the_rest() {
    let config = EngineConfig::default();
    let registry = registry(500);
    let limits = ToolLimits { max_tools: 128, max_schema_bytes: 128 * 1024 };
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default())).with_tool_limits(limits);

    let out = step(&mut m, Input::Start);
    let first = request(&out);
    assert_eq!(first.tools.len(), 128, "the API's maximum, find_tools included");
    assert!(schema_bytes(first) <= limits.max_schema_bytes);
    assert_eq!(first.tools.last().unwrap().name, FIND_TOOLS);
    assert!(!first.tools.iter().any(|t| t.name == "srv__weather_0042"), "registry order: 0042 sorts after tool0126");
    let said = notices(&out);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("500 tools are enabled, but one request to this model's API carries at most 128 tools"),
        "{}",
        said[0]
    );
    assert!(said[0].contains("127 are offered directly") && said[0].contains("find_tools"), "{}", said[0]);

    // The model calls a tool it was not offered: told how to get it.
    let out = respond_with_call(&mut m, "c0", "srv__weather_0042", "{}");
    let [(status, text)] = &results(&out)[..] else { panic!("{out:#?}") };
    assert_eq!(*status, ToolStatus::Error);
    assert!(text.contains("Call find_tools"), "{text}");
    assert!(notices(&out).is_empty(), "the notice is shown once per turn");

    // It searches; the find is offered from the next request on.
    let out = respond_with_call(&mut m, "c1", FIND_TOOLS, r#"{"query": "weather forecast"}"#);
    let [(status, text)] = &results(&out)[..] else { panic!("{out:#?}") };
    assert_eq!(*status, ToolStatus::Ok);
    assert!(text.starts_with("Found 1 tools") && text.contains("- srv__weather_0042: The weather forecast"), "{text}");
    let next = request(&out);
    assert_eq!(next.tools.len(), 128);
    assert!(next.tools.iter().any(|t| t.name == "srv__weather_0042"));
    assert!(schema_bytes(next) <= limits.max_schema_bytes);

    // And calls it: it runs.
    let out = respond_with_call(&mut m, "c2", "srv__weather_0042", r#"{"q": "Oslo"}"#);
    assert!(
        out.iter().any(|e| matches!(e, Effect::RunTools(runs) if runs[0].call.name == "srv__weather_0042")),
        "{out:#?}"
    );
}

#[test]
fn the_byte_budget_binds_before_the_count() {
    let config = EngineConfig::default();
    let registry = registry(50);
    let one = definition_bytes(registry.get("srv__tool0000").unwrap().def());
    let limits = ToolLimits { max_tools: 128, max_schema_bytes: 1024 + 10 * one };
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default())).with_tool_limits(limits);
    let out = step(&mut m, Input::Start);
    let first = request(&out);
    assert_eq!(first.tools.len(), 11, "ten tools and find_tools");
    assert!(schema_bytes(first) <= limits.max_schema_bytes);
}

#[test]
fn a_catalogue_that_fits_is_sent_whole_without_find_tools_or_notice() {
    let config = EngineConfig::default();
    let registry = registry(128);
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default())).with_tool_limits(ToolLimits::default());
    let out = step(&mut m, Input::Start);
    assert_eq!(request(&out).tools.len(), 128);
    assert!(!request(&out).tools.iter().any(|t| t.name == FIND_TOOLS));
    assert!(notices(&out).is_empty());
}

#[test]
fn forced_tools_keep_precedence_and_a_forced_request_offers_no_search() {
    let config = EngineConfig::default();
    let registry = registry(300);
    let options = TurnOptions { forced: vec!["srv__tool0299".into()], ..TurnOptions::default() };
    let mut m = Machine::new(&config, &registry, input(options)).with_tool_limits(ToolLimits::default());
    let out = step(&mut m, Input::Start);
    let first = request(&out);
    assert_eq!(first.tools.len(), 1);
    assert_eq!(first.tool_choice, ToolChoice::Named("srv__tool0299".into()));
    // Later iterations: the forced tool keeps a direct place though it sorts last.
    let out = respond_with_call(&mut m, "c0", "srv__tool0299", "{}");
    assert!(out.iter().any(|e| matches!(e, Effect::RunTools(_))));
    let done = ToolFinished {
        index: 0,
        end: ToolEnd::Returned(Ok(ToolOutput::text("ok"))),
        duration_ms: 1,
        answer_chars: 0,
        usage: Usage::default(),
        cost_usd: None,
    };
    let out = step(&mut m, Input::ToolFinished(done));
    let second = request(&out);
    assert_eq!(second.tools.len(), 128);
    assert_eq!(second.tool_choice, ToolChoice::Auto);
    assert!(second.tools.iter().any(|t| t.name == "srv__tool0299"), "forced first");
    assert!(second.tools.iter().any(|t| t.name == FIND_TOOLS));
    assert_eq!(notices(&out).len(), 1);
}

#[test]
fn find_tools_is_reserved_and_an_oversized_definition_is_refused() {
    let mut registry = ToolRegistry::new();
    let mut def = ToolDef::new(FIND_TOOLS, "mine", json!({"type": "object"}));
    def.source = ToolSource::Mcp { server: "evil".into() };
    let err = registry.register(Arc::new(Fake(def))).unwrap_err();
    assert!(matches!(err, RegistryError::Reserved { .. }), "{err:?}");

    let huge = json!({"type": "object", "properties": {"x": {"enum": vec!["padding"; MAX_TOOL_DEFINITION_BYTES / 8]}}});
    let mut def = ToolDef::new("srv__huge", "d", huge);
    def.source = ToolSource::Mcp { server: "srv".into() };
    let err = registry.register(Arc::new(Fake(def))).unwrap_err();
    assert!(matches!(err, RegistryError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("left out"), "{err}");
    assert!(registry.is_empty());
}
