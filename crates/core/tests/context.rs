//! Counting what each request sends: the `context` event's breakdown, and the rule that a request
//! counts from the provider's report of the previous one plus an estimate of what is new.

use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use switchboard_core::machine::{Effect, Estimator, Input, Machine, ToolEnd, ToolFinished};
use switchboard_core::provider::StopReason;
use switchboard_core::{
    ChatEvent, ContextBreakdown, ContextLimits, EngineConfig, Message, ProviderEvent, ProviderRequest, ReportedContext,
    TokenCounter, Tool, ToolCall, ToolContext, ToolDef, ToolError, ToolImage, ToolOutput, ToolRegistry, TurnInput,
    TurnOptions, Usage,
};

/// One token per byte: every figure below is a length anyone can check.
#[derive(Debug)]
struct Bytes;

impl TokenCounter for Bytes {
    fn count(&self, text: &str) -> u64 {
        text.len() as u64
    }
    fn image(&self, _size: Option<(u32, u32)>) -> u64 {
        100
    }
}

struct Echo(ToolDef);

impl Tool for Echo {
    fn def(&self) -> &ToolDef {
        &self.0
    }
    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ran")) })
    }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let def = ToolDef::new("echo", "Echo.", json!({ "type": "object" }));
    registry.register(Arc::new(Echo(def))).unwrap();
    registry
}

fn options(reported: Option<ReportedContext>) -> TurnOptions {
    TurnOptions {
        counter: Some(Arc::new(Bytes)),
        context: ContextLimits { window: Some(10_000), ..ContextLimits::default() },
        reported,
        ..TurnOptions::default()
    }
}

fn input(options: TurnOptions) -> TurnInput {
    TurnInput {
        conversation_id: "conv".into(),
        user_message_id: "user".into(),
        message_id: "msg".into(),
        provider_name: "profile".into(),
        model: "model".into(),
        system_prompt: Some("Be brief.".into()),
        history: vec![Message::user("Hi")],
        options,
    }
}

fn step(m: &mut Machine<'_>, input: Input) -> Vec<Effect> {
    let mut out = Vec::new();
    m.handle(input, &mut out);
    out
}

/// The `context` event and the request of these effects.
fn context_and_request(out: &[Effect]) -> ((u64, ContextBreakdown, bool, u64), ProviderRequest) {
    let mut context = None;
    let mut request = None;
    for e in out {
        match e {
            Effect::Emit(ChatEvent::Context { used_tokens, window, breakdown, estimated, estimate }) => {
                assert_eq!(*window, Some(10_000));
                assert_eq!(breakdown.total(), *used_tokens, "the breakdown sums to the total");
                context = Some((*used_tokens, *breakdown, *estimated, *estimate));
            }
            Effect::StartRequest { request: r, .. } => {
                assert!(context.is_some(), "the count comes before the request");
                request = Some(r.clone());
            }
            _ => {}
        }
    }
    (context.expect("a context event"), request.expect("a request"))
}

fn usage(prompt_tokens: u64) -> Input {
    Input::Stream(Ok(ProviderEvent::Usage(Usage { prompt_tokens, completion_tokens: 5, ..Usage::default() })))
}

/// The model calls `echo`, reporting `prompt_tokens`; the tool answers `result` (with an image).
fn round(m: &mut Machine<'_>, prompt_tokens: u64, result: &str) -> Vec<Effect> {
    let call = ToolCall { id: "c1".into(), name: "echo".into(), arguments: "{}".into() };
    step(m, Input::Stream(Ok(ProviderEvent::ToolCall { call, text_chars_before: 0 })));
    step(m, usage(prompt_tokens));
    step(m, Input::Stream(Ok(ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: None })));
    let image = ToolImage { mime_type: "image/png".into(), data: "iVBORw0KGgo=".into() };
    let output = ToolOutput { images: vec![image], ..ToolOutput::text(result) };
    let end = ToolEnd::Returned(Ok(output));
    step(
        m,
        Input::ToolFinished(ToolFinished {
            index: 0,
            end,
            duration_ms: 1,
            answer_chars: 0,
            usage: Usage::default(),
            cost_usd: Some(0.0),
        }),
    )
}

#[test]
fn the_first_request_is_an_estimate_of_everything_part_by_part() {
    let (config, registry) = (EngineConfig::default(), registry());
    let mut m = Machine::new(&config, &registry, input(options(None)));
    let ((used, b, estimated, estimate), request) = context_and_request(&step(&mut m, Input::Start));
    assert!(estimated);
    assert_eq!(used, estimate);
    // "Be brief." is 9 bytes, plus 3 for the message around it.
    assert_eq!(b.instructions, 12);
    // "echo" + "Echo." + {"type":"object"} + 8 around them.
    assert_eq!(b.tools, 4 + 5 + 17 + 8);
    // "Hi" + 3, and 3 that prime the reply.
    assert_eq!(b.history, 2 + 3 + 3);
    assert_eq!((b.tool_results, b.attachments), (0, 0));
    assert_eq!(m.estimate(&request).total, used, "estimate() is the figure the event carried");
}

#[test]
fn a_later_request_counts_from_the_previous_report_plus_what_is_new() {
    let (config, registry) = (EngineConfig::default(), registry());
    let mut m = Machine::new(&config, &registry, input(options(None)));
    let ((first, ..), _) = context_and_request(&step(&mut m, Input::Start));
    // The provider counts the first request as 70 tokens (the estimate said 54).
    let out = round(&mut m, 70, "found it");
    let ((used, b, estimated, estimate), _) = context_and_request(&out);
    assert!(!estimated);
    // New: the call (8 + "echo" + "{}" + 3 for the message) and the result ("found it" + 3) and
    // its image (100).
    let call = 3 + 8 + 4 + 2;
    let result = 3 + 8;
    assert_eq!(estimate, first + call + result + 100);
    assert_eq!(used, 70 + call + result + 100);
    assert!(b.tool_results > 0 && b.attachments > 0 && b.history > 0, "{b:?}");
}

#[test]
fn a_report_of_nothing_or_an_absurd_one_is_not_trusted() {
    let (config, registry) = (EngineConfig::default(), registry());
    for absurd in [0, 1_000_000] {
        let mut m = Machine::new(&config, &registry, input(options(None)));
        step(&mut m, Input::Start);
        let ((used, _, estimated, estimate), _) = context_and_request(&round(&mut m, absurd, "x"));
        assert!(estimated, "{absurd}");
        assert_eq!(used, estimate);
    }
}

#[test]
fn the_conversations_last_report_is_where_the_first_request_counts_from() {
    let (config, registry) = (EngineConfig::default(), registry());
    // The last request of the previous turn was reported as 900 and estimated as 50: this one
    // is that report plus what its estimate adds to that request's.
    let reported = ReportedContext { prompt_tokens: 900, estimate: 50 };
    let mut m = Machine::new(&config, &registry, input(options(Some(reported))));
    let ((used, b, estimated, estimate), _) = context_and_request(&step(&mut m, Input::Start));
    assert!(!estimated);
    assert_eq!(used, 900 + estimate - 50);
    // The parts are scaled with the total.
    assert!(b.instructions > 12 && b.tools > 34, "{b:?}");
}

#[test]
fn a_message_is_counted_once_however_many_requests_send_it() {
    #[derive(Debug, Default)]
    struct Counting(std::sync::atomic::AtomicU64);
    impl TokenCounter for Counting {
        fn count(&self, text: &str) -> u64 {
            self.0.fetch_add(text.len() as u64, std::sync::atomic::Ordering::Relaxed);
            text.len() as u64
        }
    }
    let counter = Arc::new(Counting::default());
    let estimator = Estimator::new(counter.clone());
    let mut request = ProviderRequest {
        model: "m".into(),
        system: Some("system".into()),
        messages: (0..2_000).map(|i| Message::user(format!("message {i}"))).collect(),
        tools: Vec::new(),
        tool_choice: Default::default(),
        options: Default::default(),
    };
    let first = estimator.breakdown(&request);
    let read = counter.0.load(std::sync::atomic::Ordering::Relaxed);
    request.messages.push(Message::user("one more"));
    let second = estimator.breakdown(&request);
    assert_eq!(counter.0.load(std::sync::atomic::Ordering::Relaxed), read + 8, "only the new message was read");
    assert_eq!(second.total(), first.total() + 8 + 3);
    // A message changed in place (a result shortened) is counted again.
    request.messages[5] = Message::user("short");
    let third = estimator.breakdown(&request);
    assert_eq!(third.total() + "message 5".len() as u64, second.total() + 5);
}

#[test]
fn a_handed_in_report_of_a_longer_request_is_not_the_base() {
    // After an edit, this turn sends less than the conversation's last request did.
    let (config, registry) = (EngineConfig::default(), registry());
    let reported = ReportedContext { prompt_tokens: 5_000, estimate: 4_000 };
    let mut m = Machine::new(&config, &registry, input(options(Some(reported))));
    let ((used, _, estimated, estimate), _) = context_and_request(&step(&mut m, Input::Start));
    assert!(estimated);
    assert_eq!(used, estimate);
}
