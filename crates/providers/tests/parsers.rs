//! The parser table: every API's stream parser, end to end over loopback HTTP, reading the same
//! API-neutral scripts through the mock provider's encoder for that API, each at every split of
//! the body the rows name (`None` is the whole body at once; splits of 1 and 2 bytes cut every
//! line, field and multi-byte character).
//!
//! A row is a scenario: its steps, and what every API must make of them (canonical events, with
//! each API's own differences spelled out in the row). Adding an API means one entry in [`APIS`];
//! adding a scenario means one row, which then runs for every API at every split.

use futures::StreamExt;
use serde_json::json;
use switchboard_core::provider::{StopReason, ToolSpec};
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolCall, ToolChoice, Usage,
};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_providers::anthropic::{Anthropic, AnthropicConfig};
use switchboard_providers::gemini::{GENERATED_ID_PREFIX, Gemini, GeminiConfig};
use switchboard_providers::openai_responses::OpenAiResponses;
use switchboard_providers::{OpenAiChat, OpenAiConfig};

type Items = Vec<Result<ProviderEvent, ProviderError>>;

/// One API the table runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

/// Every API, each row runs for all of them.
const APIS: [Api; 4] = [Api::Chat, Api::Responses, Api::Anthropic, Api::Gemini];

/// The splits every scripted row is read at.
const SPLITS: [Option<usize>; 7] = [None, Some(1), Some(2), Some(3), Some(5), Some(7), Some(64)];

impl Api {
    fn provider(self, server: &MockServer) -> Box<dyn Provider> {
        let base_url = server.base_url();
        match self {
            Api::Chat => Box::new(OpenAiChat::new(OpenAiConfig { base_url, api_key: None }).unwrap()),
            Api::Responses => Box::new(OpenAiResponses::new(OpenAiConfig { base_url, api_key: None }).unwrap()),
            Api::Anthropic => Box::new(Anthropic::new(AnthropicConfig { base_url, api_key: None }).unwrap()),
            Api::Gemini => Box::new(
                Gemini::new(GeminiConfig { base_url: format!("http://{}/v1beta", server.addr()), api_key: None })
                    .unwrap(),
            ),
        }
    }

    /// How the API's messages name the server, mid-sentence.
    fn who(self) -> &'static str {
        match self {
            Api::Gemini => "the Gemini API at http://",
            _ => "the provider at http://",
        }
    }

    /// The data of one event that adds the text `X`, in this API's words (for raw bytes
    /// written between scripted steps).
    fn x_event(self) -> String {
        match self {
            Api::Chat => r#"{"choices":[{"index":0,"delta":{"content":"X"}}]}"#.into(),
            Api::Responses => {
                r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"X"}"#.into()
            }
            Api::Anthropic => {
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"X"}}"#.into()
            }
            Api::Gemini => r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"X"}]},"index":0}]}"#.into(),
        }
    }
}

fn request() -> ProviderRequest {
    ProviderRequest {
        model: "mock-model".into(),
        system: Some("Be brief.".into()),
        messages: vec![Message::user("what time is it in Tokyo?")],
        tools: vec![ToolSpec {
            name: "get_time".into(),
            description: "The time.".into(),
            parameters: json!({"type":"object","properties":{"timezone":{"type":"string"}}}),
        }],
        tool_choice: ToolChoice::Auto,
        options: Default::default(),
    }
}

/// Reads every reply of `replies` through `api`, one request each, on one server.
async fn run_all(api: Api, replies: Vec<Reply>) -> Vec<Items> {
    let count = replies.len();
    let server = MockServer::start(Script::new(replies)).await;
    let provider = api.provider(&server);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(provider.stream(request()).collect().await);
    }
    out
}

/// The events that mean something: keep-alives and provider state dropped (state is checked on
/// its own), response ids blanked (each API has its own), runs of text or reasoning deltas joined
/// (each API chunks them its own way), and Gemini's generated call ids blanked after checking
/// their prefix (Gemini sends calls without ids).
fn canonical(api: Api, items: Items) -> Items {
    let mut out: Items = Vec::new();
    for item in items {
        match item {
            Ok(ProviderEvent::KeepAlive | ProviderEvent::State(_)) => {}
            Ok(ProviderEvent::Finish { reason, .. }) => {
                out.push(Ok(ProviderEvent::Finish { reason, response_id: None }))
            }
            Ok(ProviderEvent::TextDelta(t)) => match out.last_mut() {
                Some(Ok(ProviderEvent::TextDelta(prev))) => prev.push_str(&t),
                _ => out.push(Ok(ProviderEvent::TextDelta(t))),
            },
            Ok(ProviderEvent::ReasoningDelta(t)) => match out.last_mut() {
                Some(Ok(ProviderEvent::ReasoningDelta(prev))) => prev.push_str(&t),
                _ => out.push(Ok(ProviderEvent::ReasoningDelta(t))),
            },
            Ok(ProviderEvent::ToolCall { mut call, text_chars_before }) if api == Api::Gemini => {
                assert!(call.id.starts_with(GENERATED_ID_PREFIX), "{}", call.id);
                call.id.clear();
                out.push(Ok(ProviderEvent::ToolCall { call, text_chars_before }));
            }
            other => out.push(other),
        }
    }
    out
}

fn text_of(items: &Items) -> String {
    items
        .iter()
        .filter_map(|i| match i {
            Ok(ProviderEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn error_of(items: &Items) -> Option<&ProviderError> {
    items.iter().find_map(|i| i.as_ref().err())
}

/// Row: reasoning, text with multi-byte characters, two parallel calls (one with multi-byte
/// arguments), usage. Every API gives the same events at every split, and Anthropic keeps its
/// signed thinking block whole as state.
#[tokio::test]
async fn a_tool_round_gives_the_same_events_on_every_api_at_every_split() {
    let before = "Let me check 🕐 東京の時間: ";
    let args = r#"{"timezone":"Asia/Tokyo","note":"🙂 é"}"#;
    let steps = || {
        vec![
            Step::Reasoning { text: "The person is in 東京.".into() },
            Step::text(before),
            Step::ParallelToolCalls {
                calls: vec![
                    ("call_1".into(), "get_time".into(), args.into()),
                    ("call_2".into(), "get_time".into(), "{}".into()),
                ],
            },
            Step::finish("tool_calls"),
            Step::Usage { prompt_tokens: 30, completion_tokens: 9, reasoning_tokens: 3, cached_tokens: 20 },
            Step::Done,
        ]
    };
    let reply = |split| Reply::Stream {
        steps: steps(),
        options: StreamOptions {
            text_chunk_chars: Some(3),
            args_chunk_chars: Some(2),
            split_bytes: split,
            ..StreamOptions::default()
        },
    };
    for api in APIS {
        // Gemini sends calls without ids (the parser makes them up) and arguments as a JSON
        // object (written back with its keys in order); Anthropic's usage has no reasoning count.
        let id = |id: &str| if api == Api::Gemini { String::new() } else { id.to_owned() };
        let args = if api == Api::Gemini {
            serde_json::from_str::<serde_json::Value>(args).unwrap().to_string()
        } else {
            args.to_owned()
        };
        let reasoning_tokens = if api == Api::Anthropic { 0 } else { 3 };
        let expected: Items = vec![
            Ok(ProviderEvent::ReasoningDelta("The person is in 東京.".into())),
            Ok(ProviderEvent::TextDelta(before.into())),
            Ok(ProviderEvent::ToolCall {
                call: ToolCall { id: id("call_1"), name: "get_time".into(), arguments: args.clone() },
                text_chars_before: before.chars().count(),
            }),
            Ok(ProviderEvent::ToolCall {
                call: ToolCall { id: id("call_2"), name: "get_time".into(), arguments: "{}".into() },
                text_chars_before: before.chars().count(),
            }),
            Ok(ProviderEvent::Usage(Usage {
                prompt_tokens: 30,
                completion_tokens: 9,
                reasoning_tokens,
                cached_tokens: 20,
                cache_write_tokens: 0,
            })),
            Ok(ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: None }),
        ];
        let runs = run_all(api, SPLITS.iter().map(|&s| reply(s)).collect()).await;
        for (items, split) in runs.into_iter().zip(SPLITS) {
            if api == Api::Anthropic {
                // The signed thinking block is kept whole, whatever the split.
                let state = items.iter().find_map(|i| match i {
                    Ok(ProviderEvent::State(s)) => Some(s.data["blocks"][0].clone()),
                    _ => None,
                });
                let signature = switchboard_mock_provider::signatures::thinking_signature("The person is in 東京.");
                assert_eq!(
                    state,
                    Some(json!({"type": "thinking", "thinking": "The person is in 東京.", "signature": signature})),
                    "{api:?} split {split:?}"
                );
            }
            assert_eq!(canonical(api, items), expected, "{api:?} split {split:?}");
        }
    }
}

/// Row: every field form the event-stream rules allow, written raw between two pieces of text,
/// is read at every split on every API and never ends the answer. `X` stands for one event that
/// adds the text "X" in the API's own words.
#[tokio::test]
async fn every_field_form_the_rules_allow_is_read_at_every_split_on_every_api() {
    for api in APIS {
        let x = api.x_event();
        // (bytes between "he" and "llo", text they add)
        let forms: Vec<(Vec<u8>, &str)> = vec![
            (b": keep-alive\n\n".to_vec(), ""),
            (format!("data:{x}\n\n").into_bytes(), "X"),
            (b"foo: bar\n\n".to_vec(), ""),
            (b"nocolon\n\n".to_vec(), ""),
            // `data` with no colon is a data field with an empty value, as `data:` is.
            (b"data\n\n".to_vec(), ""),
            (b"data:\n\n".to_vec(), ""),
            (b"data\r\n\r\n".to_vec(), ""),
            (format!("data\ndata: {x}\n\n").into_bytes(), "X"),
            (b"retry: soon\n\n".to_vec(), ""),
            (b"retry: 10\n\n".to_vec(), ""),
            (b"id: a\0b \xFF odd\n\n".to_vec(), ""),
            (format!("id: \0\ndata: {x}\n\n").into_bytes(), "X"),
            (b"data : not a data field\n\n".to_vec(), ""),
            (b"event: ping\n\n".to_vec(), ""),
            (format!("data: {x}\r\n\r\n").into_bytes(), "X"),
            (format!("data: {x}\r\r").into_bytes(), "X"),
            ([&b"unknown: \xFF\n"[..], format!("data: {x}\n\n").as_bytes()].concat(), "X"),
            (b"\xFF\xFE\n\n".to_vec(), ""),
        ];
        let mut replies = Vec::new();
        let mut expected = Vec::new();
        for (bytes, adds) in &forms {
            let steps = || {
                vec![
                    Step::text("he"),
                    Step::RawBytes { bytes: bytes.clone() },
                    Step::text("llo"),
                    Step::finish("stop"),
                    Step::Done,
                ]
            };
            // The form's own length plus the event around it covers every split point within it.
            for split in (1..=bytes.len() + 8).map(Some).chain([None]) {
                replies.push(Reply::Stream {
                    steps: steps(),
                    options: StreamOptions { split_bytes: split, ..StreamOptions::default() },
                });
                expected.push((format!("he{adds}llo"), bytes.clone(), split));
            }
        }
        let runs = run_all(api, replies).await;
        for (items, (want, bytes, split)) in runs.into_iter().zip(expected) {
            let form = String::from_utf8_lossy(&bytes);
            assert_eq!(error_of(&items), None, "{api:?} {form:?} split {split:?}");
            assert_eq!(text_of(&items), want, "{api:?} {form:?} split {split:?}");
            assert!(
                matches!(items.last(), Some(Ok(ProviderEvent::Finish { reason: StopReason::Stop, .. }))),
                "{api:?} {form:?} split {split:?}: {items:?}"
            );
        }
    }
}

/// Row: a byte-order mark before the first event is dropped at every split, on every API.
#[tokio::test]
async fn a_bom_at_the_start_is_dropped_at_every_split_on_every_api() {
    for api in APIS {
        let replies = (1..=12)
            .map(|split| Reply::Stream {
                steps: vec![
                    Step::RawBytes { bytes: b"\xEF\xBB\xBF".to_vec() },
                    Step::text("ok"),
                    Step::finish("stop"),
                    Step::Done,
                ],
                options: StreamOptions { split_bytes: Some(split), ..StreamOptions::default() },
            })
            .collect();
        for (items, split) in run_all(api, replies).await.into_iter().zip(1..) {
            assert_eq!(error_of(&items), None, "{api:?} split {split}");
            assert_eq!(text_of(&items), "ok", "{api:?} split {split}");
        }
    }
}

/// Row: the connection cut after some text and before the answer's end is a network error that
/// keeps the text, says the connection was lost mid-answer and names the server, at every split.
#[tokio::test]
async fn a_cut_before_the_answers_end_is_a_network_error_on_every_api_at_every_split() {
    for api in APIS {
        let replies = SPLITS
            .iter()
            .map(|&split| Reply::Stream {
                steps: vec![Step::text("partial"), Step::Drop],
                options: StreamOptions { split_bytes: split, ..StreamOptions::default() },
            })
            .collect();
        for (items, split) in run_all(api, replies).await.into_iter().zip(SPLITS) {
            assert_eq!(text_of(&items), "partial", "{api:?} split {split:?}");
            let err = error_of(&items).unwrap_or_else(|| panic!("{api:?} split {split:?}: no error"));
            assert_eq!(err.kind, ErrorKind::Network, "{api:?} split {split:?}");
            assert!(items.last().unwrap().is_err(), "{api:?}: the error ends the stream");
            assert!(err.message.contains("lost mid-answer"), "{api:?}: {}", err.message);
            assert!(!err.message.contains("base URL"), "{api:?}: {}", err.message);
            assert!(err.message.contains(api.who()), "{api:?}: {}", err.message);
        }
    }
}

/// Row: an error object mid-stream keeps what came before, then ends the answer with a
/// retryable overloaded error, at every split.
#[tokio::test]
async fn an_error_mid_stream_keeps_what_came_before_on_every_api_at_every_split() {
    for api in APIS {
        // (the code the API uses for "overloaded", what its message must quote)
        let (code, quoted) = match api {
            Api::Chat => ("overloaded_error", None),
            Api::Responses => ("overloaded_error", Some("Overloaded")),
            Api::Anthropic => ("overloaded_error", Some("overloaded_error")),
            Api::Gemini => ("UNAVAILABLE", None),
        };
        let replies = SPLITS
            .iter()
            .map(|&split| Reply::Stream {
                steps: vec![
                    Step::text("Part"),
                    Step::ErrorObject { message: "Overloaded".into(), code: Some(code.into()) },
                ],
                options: StreamOptions { split_bytes: split, ..StreamOptions::default() },
            })
            .collect();
        for (items, split) in run_all(api, replies).await.into_iter().zip(SPLITS) {
            let items = canonical(api, items);
            assert_eq!(items[0], Ok(ProviderEvent::TextDelta("Part".into())), "{api:?} split {split:?}");
            let e = items[1].clone().unwrap_err();
            assert_eq!(e.kind, ErrorKind::Overloaded, "{api:?} split {split:?}: {}", e.message);
            assert!(e.is_retryable(), "{api:?}: {}", e.message);
            if let Some(quoted) = quoted {
                assert!(e.message.contains(quoted), "{api:?}: {}", e.message);
            }
            assert_eq!(items.len(), 2, "{api:?} split {split:?}: {items:?}");
        }
    }
}

/// Row: a body that ends cleanly after some text, without the answer's end (no finish reason,
/// stop reason or terminal event), is a network error that says the stream ended early, at every
/// split.
#[tokio::test]
async fn a_body_that_ends_before_the_answer_is_a_network_error_on_every_api_at_every_split() {
    for api in APIS {
        let replies = SPLITS
            .iter()
            .map(|&split| Reply::Stream {
                steps: vec![Step::text("par")],
                options: StreamOptions { split_bytes: split, ..StreamOptions::default() },
            })
            .collect();
        for (items, split) in run_all(api, replies).await.into_iter().zip(SPLITS) {
            assert_eq!(text_of(&items), "par", "{api:?} split {split:?}");
            let err = items.last().unwrap().clone().unwrap_err();
            assert_eq!(err.kind, ErrorKind::Network, "{api:?} split {split:?}: {}", err.message);
            assert!(err.message.contains("ended before the response was complete"), "{api:?}: {}", err.message);
            assert!(err.message.contains(api.who()), "{api:?}: {}", err.message);
        }
    }
}

/// Every API's provider reads the mock's counted usage as the mock counted it, and its refusal of
/// a prompt over the window as a context length error with the numbers (the Responses API's words
/// give none).
#[tokio::test]
async fn counted_usage_and_a_refused_prompt_read_the_same_on_every_api() {
    for api in APIS {
        let server = MockServer::start(Script::new([Reply::text("ok")]).with_counted_usage()).await;
        let provider = api.provider(&server);
        let items: Items = provider.stream(request()).collect().await;
        let counted = server.requests()[0].counted.expect("counted");
        let usage = items.iter().find_map(|i| match i {
            Ok(ProviderEvent::Usage(u)) => Some(*u),
            _ => None,
        });
        let usage = usage.unwrap_or_else(|| panic!("{api:?}: no usage"));
        assert_eq!(
            (usage.prompt_tokens, usage.cached_tokens, usage.cache_write_tokens),
            (counted.prompt_tokens, counted.cached_tokens, counted.cache_write_tokens),
            "{api:?}"
        );

        server.set_context_window(Some(counted.prompt_tokens - 1));
        let items: Items = provider.stream(request()).collect().await;
        let error = error_of(&items).unwrap_or_else(|| panic!("{api:?}: no error"));
        assert_eq!(error.kind, ErrorKind::ContextLength, "{api:?}: {error:?}");
        let expected = (api != Api::Responses).then_some(switchboard_core::ContextOverflow {
            prompt_tokens: Some(counted.prompt_tokens),
            window: Some(counted.prompt_tokens - 1),
        });
        assert_eq!(error.overflow, expected, "{api:?}");
    }
}
