//! Profiles end to end against the mock: generation settings reach the request, a model that
//! takes no tools is offered none, "Test connection" says what is wrong in one line, and a
//! response's provider state goes back to its own API only.

use std::sync::Arc;
use std::time::Duration;
use switchboard_core::event::VecSink;
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{ChatEvent, ErrorKind, GenerationOptions, NoticeKind, ReasoningEffort};
use switchboard_mock_provider::{MockServer, Reply, Script, Step};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ProfileOptions, ProviderProfile, SendRequest};
use switchboard_store::Store;

fn service() -> Service {
    Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap()
}

fn profile(name: &str, kind: &str, base_url: &str, model: &str, options: ProfileOptions) -> ProviderProfile {
    ProviderProfile {
        name: name.into(),
        kind: kind.into(),
        base_url: base_url.into(),
        model: Some(model.into()),
        options,
    }
}

/// Runs one turn to its end; the events the shell saw.
async fn ask(service: &Service, conversation: Option<&str>, provider: &str, text: &str) -> Vec<ChatEvent> {
    let request =
        SendRequest { provider: Some(provider.into()), ..SendRequest::text(conversation.map(str::to_owned), text) };
    let turn = service.prepare(request).unwrap();
    let sink = Arc::new(VecSink::default());
    let approver = FixedApprover(ApprovalDecision::Once);
    let report = tokio::time::timeout(Duration::from_secs(20), service.run(turn, sink.clone(), Arc::new(approver)))
        .await
        .expect("turn stalled");
    assert!(report.storage_error.is_none());
    sink.events()
}

fn conversation_of(events: &[ChatEvent]) -> String {
    match &events[0] {
        ChatEvent::Started { conversation_id, .. } => conversation_id.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profiles_output_limit_and_effort_reach_the_request_and_are_kept() {
    let mock = MockServer::start(Script::new([Reply::text("Fine.")])).await;
    let service = service();
    let options = ProfileOptions {
        generation: GenerationOptions {
            max_output_tokens: Some(777),
            reasoning_effort: Some(ReasoningEffort::High),
            thinking_budget: None,
            ..Default::default()
        },
        ..ProfileOptions::default()
    };
    service.add_provider(&profile("p", "openai", &mock.base_url(), "o4-mini", options), true).unwrap();
    assert_eq!(service.providers().unwrap()[0].options, options, "the options are stored with the profile");
    ask(&service, None, "p", "hi").await;
    let body = &mock.requests()[0].body;
    assert_eq!(body["max_tokens"], 777, "a compatible server gets the classic name");
    assert_eq!(body["reasoning_effort"], "high");

    // A model the table knows takes no reasoning controls does not get them (it would refuse).
    service.add_provider(&profile("p", "openai", &mock.base_url(), "gpt-4o", options), true).unwrap();
    mock.push(Reply::text("Fine."));
    ask(&service, None, "p", "hi").await;
    let body = &mock.requests()[1].body;
    assert_eq!(body["max_tokens"], 777);
    assert!(body.get("reasoning_effort").is_none(), "{body:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_takes_no_tools_is_offered_none_and_the_person_is_told_why() {
    let mock = MockServer::start(Script::new([Reply::text("Hello.")])).await;
    let service = service();
    service.add_provider(&profile("local", "openai", &mock.base_url(), "gemma2:9b", Default::default()), true).unwrap();
    let events = ask(&service, None, "local", "hi").await;
    assert!(mock.requests()[0].body.get("tools").is_none(), "no tools offered");
    let notice = events.iter().find_map(|e| match e {
        ChatEvent::Notice { kind: NoticeKind::ToolUnavailable, message } => Some(message.clone()),
        _ => None,
    });
    let notice = notice.expect("a notice says why");
    assert!(notice.contains("gemma2:9b does not take tools") && notice.contains("'local'"), "{notice}");

    // The person knows better: tools on.
    let on = ProfileOptions { tools: Some(true), ..Default::default() };
    service.add_provider(&profile("local", "openai", &mock.base_url(), "gemma2:9b", on), true).unwrap();
    mock.push(Reply::text("Hello."));
    ask(&service, None, "local", "hi").await;
    assert!(!mock.requests()[1].tool_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_tools_is_asked_again_without_them() {
    let refusal =
        r#"{"error":{"message":"registry.ollama.ai/library/mystery:7b does not support tools","type":"api_error"}}"#;
    let mock = MockServer::start(Script::new([Reply::http(400, refusal), Reply::text("Plain answer.")])).await;
    let service = service();
    service
        .add_provider(&profile("local", "openai", &mock.base_url(), "mystery:7b", Default::default()), true)
        .unwrap();
    let events = ask(&service, None, "local", "hi").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].tool_names().is_empty() && requests[1].body.get("tools").is_none());
    assert!(events.iter().any(|e| matches!(e, ChatEvent::TextDelta { text } if text == "Plain answer.")));
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::Error { .. })), "{events:#?}");
    let view = service.open(&conversation_of(&events)).unwrap();
    assert_eq!(view.messages[1].content, "Plain answer.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_connection_says_what_works_and_what_is_wrong_in_one_line() {
    let mock = MockServer::start(Script::new([Reply::text("OK")])).await;
    let service = service();
    service.add_provider(&profile("good", "openai", &mock.base_url(), "mock-model", Default::default()), true).unwrap();
    let report = service.test_provider(Some("good")).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.models, report.model_listed, report.tools), (Some(2), Some(true), Some(true)));
    assert!(report.summary.contains("2 models") && report.summary.contains("takes tools"), "{}", report.summary);
    let request = &mock.requests()[0].body;
    assert!(request["max_tokens"].as_u64().unwrap() <= 64, "the request is tiny: {request:#}");

    // The base URL without /v1.
    let bare = mock.base_url().trim_end_matches("/v1").to_owned();
    service.add_provider(&profile("bare", "openai", &bare, "mock-model", Default::default()), false).unwrap();
    let report = service.test_provider(Some("bare")).await.unwrap();
    assert!(!report.ok);
    assert!(report.summary.contains("needs /v1"), "{}", report.summary);
    assert_eq!(report.error_kind, Some(ErrorKind::NotFound));

    // A server that is not running.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    service.add_provider(&profile("dead", "openai", &dead, "m", Default::default()), false).unwrap();
    let report = service.test_provider(Some("dead")).await.unwrap();
    assert!(report.summary.starts_with("Couldn't connect to 127.0.0.1:"), "{}", report.summary);
    assert!(report.summary.contains("is the server running"), "{}", report.summary);
    assert!(report.detail.is_some(), "the technical detail is kept for Details");

    // A rejected key, and a model that takes no tools.
    let body = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
    let keyless = MockServer::start(Script::new([])).await;
    keyless.push(Reply::http(401, body));
    service
        .add_provider(&profile("keyless", "anthropic", &keyless.base_url(), "claude-x", Default::default()), false)
        .unwrap();
    let report = service.test_provider(Some("keyless")).await.unwrap();
    assert_eq!(report.key_accepted, Some(false), "{report:?}");
    assert!(
        report.summary.contains("key was refused") && report.summary.contains("ANTHROPIC_API_KEY"),
        "{}",
        report.summary
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_thinking_goes_back_to_its_api_and_is_dropped_after_a_switch() {
    // One mock speaks both APIs: the Anthropic answer thinks and calls a tool, then answers;
    // the next question goes to an OpenAI profile on the same server, then back to Anthropic.
    let script = Script::new([
        Reply::stream([
            Step::Reasoning { text: "The person wants the time; get_time knows it.".into() },
            Step::tool_call("toolu_1", "get_time", r#"{"timezone":"UTC"}"#),
            Step::finish("tool_calls"),
            Step::usage(10, 5),
            Step::Done,
        ]),
        Reply::reasoning_then_text("It answered.", "It is noon."),
        Reply::text("Switched."),
        Reply::text("Back."),
    ]);
    let mock = MockServer::start(script).await;
    let service = service();
    let thinking = ProfileOptions {
        generation: GenerationOptions { thinking_budget: Some(2048), ..Default::default() },
        ..Default::default()
    };
    service
        .add_provider(&profile("claude", "anthropic", &mock.base_url(), "claude-sonnet-4-5", thinking), true)
        .unwrap();
    service.add_provider(&profile("gpt", "openai", &mock.base_url(), "gpt-4o", Default::default()), false).unwrap();

    let events = ask(&service, None, "claude", "What time is it?").await;
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::Error { .. })), "{events:#?}");
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::ProviderState { .. })), "the shell never sees state");
    let conversation = conversation_of(&events);
    let requests = mock.requests();
    assert_eq!(requests[0].body["thinking"]["budget_tokens"], 2048);
    // The strict mock checks the signature; the thinking block leads the tool_use message.
    let sent = &requests[1].messages()[1]["content"];
    assert_eq!(sent[0]["type"], "thinking", "{sent:#}");
    assert_eq!(sent[0]["thinking"], "The person wants the time; get_time knows it.");

    // On OpenAI the Anthropic state is dropped: plain messages the Chat API takes.
    let events = ask(&service, Some(&conversation), "gpt", "Thanks. And now?").await;
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::Error { .. })), "{events:#?}");
    let chat = &mock.requests()[2];
    assert_eq!(chat.path, "/v1/chat/completions");
    assert!(!chat.body.to_string().contains("signature"), "{:#}", chat.body);
    let call = chat.messages().iter().find_map(|m| m.get("tool_calls")).expect("the history crosses, calls included");
    assert_eq!(call[0]["id"], "toolu_1");

    // Back on Anthropic, after a reload of the history from the store: the kept blocks of its own
    // earlier answer go back exactly as they came.
    let events = ask(&service, Some(&conversation), "claude", "Once more?").await;
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::Error { .. })), "{events:#?}");
    let back = &mock.requests()[3];
    let first_answer = &back.messages()[1]["content"];
    assert_eq!(first_answer[0]["type"], "thinking", "{:#}", back.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chats_sampling_settings_win_over_the_profiles_and_reasoning_models_get_none() {
    let mock = MockServer::start(Script::new([Reply::text("a"), Reply::text("b")])).await;
    let service = service();
    let options = ProfileOptions {
        generation: GenerationOptions { temperature: Some(0.7), top_p: Some(0.9), ..Default::default() },
        ..Default::default()
    };
    service.add_provider(&profile("p", "openai", &mock.base_url(), "gpt-4o", options), true).unwrap();
    let chat = GenerationOptions { temperature: Some(0.1), max_output_tokens: Some(50), ..Default::default() };
    let request = SendRequest { generation: Some(chat), ..SendRequest::text(None, "hi") };
    let turn = service.prepare(request).unwrap();
    service.run(turn, Arc::new(VecSink::default()), Arc::new(FixedApprover(ApprovalDecision::Once))).await;
    let body = &mock.requests()[0].body;
    // Sent as the person set them (an f32 on the way sent 0.10000000149011612).
    assert_eq!((body["temperature"].as_f64(), body["top_p"].as_f64()), (Some(0.1), Some(0.9)));
    assert_eq!(body["max_tokens"], 50);

    // OpenAI's reasoning models refuse sampling settings: none are sent.
    service.add_provider(&profile("p", "openai", &mock.base_url(), "o4-mini", options), true).unwrap();
    ask(&service, None, "p", "hi").await;
    let body = &mock.requests()[1].body;
    assert!(body.get("temperature").is_none() && body.get("top_p").is_none(), "{body:#}");

    // Out of range: refused before anything is written.
    let bad = GenerationOptions { temperature: Some(3.0), ..Default::default() };
    let e = service.prepare(SendRequest { generation: Some(bad), ..SendRequest::text(None, "hi") }).unwrap_err();
    assert!(e.message.contains("temperature must be a number from 0 to 2"), "{}", e.message);
    let bad_profile = ProfileOptions {
        generation: GenerationOptions { top_p: Some(1.5), ..Default::default() },
        ..Default::default()
    };
    let e = service.add_provider(&profile("q", "openai", &mock.base_url(), "m", bad_profile), false).unwrap_err();
    assert!(e.message.contains("Top-p"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_chat_gets_a_short_title_from_its_model_unless_the_person_opted_out_or_renamed_it() {
    let mock = MockServer::start(Script::new([
        Reply::text("It is 9 pm in Tokyo."),
        Reply::text("\"Tokyo time check.\""),
        Reply::text("Noted."),
    ]))
    .await;
    let service = service();
    service.add_provider(&profile("p", "openai", &mock.base_url(), "gpt-4o", Default::default()), true).unwrap();
    let events = ask(&service, None, "p", "what time is it in Tokyo? I need to call a friend there").await;
    let id = conversation_of(&events);
    assert_eq!(service.generate_title(&id).await.unwrap(), "Tokyo time check");
    assert_eq!(service.conversations().unwrap()[0].title, "Tokyo time check");
    let request = &mock.requests()[1].body;
    assert!(request.get("tools").is_none(), "a title request offers no tools: {request:#}");
    assert_eq!(request["max_tokens"], 40);
    let shown = request["messages"][1]["content"].as_str().unwrap();
    assert!(shown.contains("Person: what time is it in Tokyo?") && shown.contains("Assistant: It is 9 pm"), "{shown}");

    // A title the person chose stays; so does the first line when they opted out.
    service.rename(&id, "Calling Kenji").unwrap();
    assert_eq!(service.generate_title(&id).await.unwrap(), "Calling Kenji");
    let events = ask(&service, None, "p", "Another question").await;
    let other = conversation_of(&events);
    let mut settings = service.settings().unwrap();
    settings.chats.titles = switchboard_service::settings::TitleMode::FirstLine;
    service.update_settings(&settings).unwrap();
    assert_eq!(service.generate_title(&other).await.unwrap(), "Another question");
    assert_eq!(mock.requests().len(), 3, "no request when opted out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_servers_that_answer_are_offered_and_one_already_added_is_named() {
    let running = MockServer::start(Script::new([])).await;
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let service = service();
    let candidates = vec![("ollama".to_owned(), dead), ("lmstudio".to_owned(), running.base_url())];
    let found = service.detect_servers(&candidates).await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].preset.as_str(), found[0].label.as_str()), ("lmstudio", "LM Studio"));
    assert_eq!(found[0].models, ["mock-model", "mock-reasoner"]);
    assert_eq!(found[0].profile, None);
    service
        .add_provider(&profile("studio", "openai", &running.base_url(), "mock-model", Default::default()), true)
        .unwrap();
    let found = service.detect_servers(&candidates).await.unwrap();
    assert_eq!(found[0].profile.as_deref(), Some("studio"));
}
