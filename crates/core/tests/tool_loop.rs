//! The tool loop (`Engine::run_turn`) driven end to end by a scripted provider and test tools.
//! No network, no disk; time-dependent tests run on tokio's paused clock.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use switchboard_core::provider::{ProviderEvent, StopReason, ToolChoice};
use switchboard_core::tool::ApprovalPolicy;
use switchboard_core::{
    ApprovalDecision, ChatEvent, ErrorKind, FinishReason, Message, NoticeKind, ProviderError, ToolCall, ToolSource,
    ToolStatus,
};
use tokio::time::Instant;

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
}

// 1. ------------------------------------------------------------------------------------------

#[tokio::test]
async fn plain_text_turn_emits_started_deltas_usage_and_done_stop() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([events(vec![
        delta("Hel"),
        delta("lo 👋"),
        Ok(ProviderEvent::Usage(USAGE)),
        finish(StopReason::Stop),
    ])]);
    let mut ran = Harness::new(&kit).run(&provider).await;

    // Before the request: how much of the context it fills.
    assert!(matches!(ran.events.remove(1), ChatEvent::Context { estimated: true, used_tokens: 1.., .. }));
    assert_eq!(
        ran.events,
        vec![
            ChatEvent::Started {
                conversation_id: CONVERSATION.into(),
                message_id: MESSAGE.into(),
                user_message_id: USER_MESSAGE.into(),
                provider: "scripted-profile".into(),
                model: MODEL.into(),
            },
            ChatEvent::TextDelta { text: "Hel".into() },
            ChatEvent::TextDelta { text: "lo 👋".into() },
            ChatEvent::Usage {
                usage: USAGE,
                total: USAGE,
                request: 1,
                cost_usd: None,
                estimated: false,
                agent_call: None
            },
            ChatEvent::Done { finish_reason: FinishReason::Stop, usage: USAGE, tool_calls_made: 0 },
        ]
    );
    assert_eq!(ran.outcome.error, None);
    assert_eq!(ran.requests.len(), 1);
    assert_eq!(ran.requests[0].model, MODEL);
    assert_eq!(ran.requests[0].messages, vec![Message::user(USER_TEXT)]);
    assert_eq!(kit.total(), 0);
}

#[tokio::test]
async fn provider_stop_reasons_become_finish_reasons() {
    let cases = [
        (StopReason::Stop, FinishReason::Stop),
        (StopReason::Length, FinishReason::Length),
        (StopReason::ContentFilter, FinishReason::ContentFilter),
        (StopReason::Other("whatever".into()), FinishReason::Stop),
    ];
    for (stop, expected) in cases {
        let kit = Kit::standard();
        let provider = ScriptedProvider::new([events(vec![delta("x"), finish(stop.clone())])]);
        let ran = Harness::new(&kit).run(&provider).await;
        assert_eq!(ran.finish_reason(), expected, "{stop:?}");
    }
}

// 2. ------------------------------------------------------------------------------------------

#[tokio::test]
async fn tool_call_offsets_count_chars_of_the_whole_turn_and_history_carries_calls_and_results() {
    let kit = Kit::standard();
    let first_text = "Olá 👋 世界 "; // 9 chars, 17 bytes, 10 UTF-16 units
    let second_text = "再见 🎉"; // 4 chars, 11 bytes
    assert_eq!((first_text.chars().count(), first_text.len()), (9, 17));
    let provider = ScriptedProvider::new([
        calls(first_text, &[("c1", "echo", r#"{"text":"one"}"#)]),
        calls(second_text, &[("c2", "echo", r#"{"text":"two"}"#), ("c3", "count", r#"{"n":3}"#)]),
        text("Fertig ✅"),
    ]);
    let ran = Harness::new(&kit).run(&provider).await;

    assert_eq!(ran.finish_reason(), FinishReason::Stop);
    assert_eq!(ran.text(), format!("{first_text}{second_text}Fertig ✅"));
    assert_eq!(
        ran.tool_calls(),
        vec![
            ("c1".into(), "echo".into(), 9, 1, 0),
            ("c2".into(), "echo".into(), 13, 2, 0),
            ("c3".into(), "count".into(), 13, 2, 1),
        ],
        "offsets are chars of the turn's text, accumulated over iterations"
    );
    // The call event comes after the text before it.
    let text_pos = ran.position(|e| matches!(e, ChatEvent::TextDelta { text } if text == first_text)).unwrap();
    let call_pos = ran.position(|e| matches!(e, ChatEvent::ToolCall { id, .. } if id == "c1")).unwrap();
    assert!(text_pos < call_pos);

    assert_eq!(ran.requests.len(), 3);
    let user = Message::user(USER_TEXT);
    assert_eq!(
        ran.requests[1].messages,
        vec![
            user.clone(),
            Message::Assistant {
                text: first_text.into(),
                tool_calls: vec![call("c1", "echo", r#"{"text":"one"}"#)],
                state: None
            },
            Message::Tool {
                images: Default::default(),
                call_id: "c1".into(),
                name: "echo".into(),
                content: "one".into(),
                is_error: false
            },
        ]
    );
    assert_eq!(ran.requests[2].messages[..3], ran.requests[1].messages[..]);
    assert_eq!(
        ran.requests[2].messages[3..],
        [
            Message::Assistant {
                text: second_text.into(),
                tool_calls: vec![call("c2", "echo", r#"{"text":"two"}"#), call("c3", "count", r#"{"n":3}"#)],
                state: None
            },
            Message::Tool {
                images: Default::default(),
                call_id: "c2".into(),
                name: "echo".into(),
                content: "two".into(),
                is_error: false
            },
            Message::Tool {
                images: Default::default(),
                call_id: "c3".into(),
                name: "count".into(),
                content: "counted to 3".into(),
                is_error: false,
            },
        ]
    );
}

#[tokio::test]
async fn a_call_made_mid_response_gets_the_offset_where_it_appeared() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([
        events(vec![
            delta("ab"),
            // The call's first fragment arrived after "ab"; text kept streaming before it completed.
            delta("çd"),
            tool_call("late", "echo", r#"{"text":"x"}"#, 2),
            finish(StopReason::ToolCalls),
        ]),
        text("ok"),
    ]);
    let ran = Harness::new(&kit).run(&provider).await;
    assert_eq!(ran.tool_calls()[0].2, 2);
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
}

// 3. ------------------------------------------------------------------------------------------

/// A small registry for toolset tests: `count`, `echo`, `slow` and the exclusive `solo`.
fn toolset_kit() -> Kit {
    Kit::new([count(), echo(), slow(), solo()])
}

#[tokio::test]
async fn the_toolset_of_each_request_follows_the_policy() {
    struct Case {
        name: &'static str,
        use_tools: bool,
        forced: &'static [&'static str],
        chat_disabled: &'static [&'static str],
        settings_disabled: &'static [&'static str],
        first: (&'static [&'static str], ToolChoice),
        second: (&'static [&'static str], ToolChoice),
        unavailable: &'static [&'static str],
    }
    let all: &[&str] = &["count", "echo", "slow"];
    let cases = [
        Case {
            name: "default: every enabled non-exclusive tool, auto",
            use_tools: true,
            forced: &[],
            chat_disabled: &[],
            settings_disabled: &[],
            first: (all, ToolChoice::Auto),
            second: (all, ToolChoice::Auto),
            unavailable: &[],
        },
        Case {
            name: "one forced tool: alone and named first, then everything with auto",
            use_tools: true,
            forced: &["echo"],
            chat_disabled: &[],
            settings_disabled: &[],
            first: (&["echo"], ToolChoice::Named("echo".into())),
            second: (all, ToolChoice::Auto),
            unavailable: &[],
        },
        Case {
            name: "several forced tools: one of them first, then everything with auto",
            use_tools: true,
            forced: &["slow", "echo"],
            chat_disabled: &[],
            settings_disabled: &[],
            first: (&["echo", "slow"], ToolChoice::OneOf(strings(&["echo", "slow"]))),
            second: (all, ToolChoice::Auto),
            unavailable: &[],
        },
        Case {
            name: "use_tools off: no tools and ToolChoice::None, forcing ignored",
            use_tools: false,
            forced: &["echo"],
            chat_disabled: &[],
            settings_disabled: &[],
            first: (&[], ToolChoice::None),
            second: (&[], ToolChoice::None),
            unavailable: &[],
        },
        Case {
            name: "disabled for the chat and in settings: never offered",
            use_tools: true,
            forced: &[],
            chat_disabled: &["echo"],
            settings_disabled: &["slow"],
            first: (&["count"], ToolChoice::Auto),
            second: (&["count"], ToolChoice::Auto),
            unavailable: &[],
        },
        Case {
            name: "a forced exclusive tool is alone in every iteration",
            use_tools: true,
            forced: &["solo", "echo"],
            chat_disabled: &[],
            settings_disabled: &[],
            first: (&["solo"], ToolChoice::Named("solo".into())),
            second: (&["solo"], ToolChoice::Auto),
            unavailable: &[],
        },
        Case {
            name: "forcing a settings-disabled tool: not offered, notice",
            use_tools: true,
            forced: &["echo"],
            chat_disabled: &[],
            settings_disabled: &["echo"],
            first: (&["count", "slow"], ToolChoice::Auto),
            second: (&["count", "slow"], ToolChoice::Auto),
            unavailable: &["echo"],
        },
        Case {
            name: "forcing a chat-disabled tool and an unknown one: notices",
            use_tools: true,
            forced: &["count", "nope"],
            chat_disabled: &["count"],
            settings_disabled: &[],
            first: (&["echo", "slow"], ToolChoice::Auto),
            second: (&["echo", "slow"], ToolChoice::Auto),
            unavailable: &["count", "nope"],
        },
    ];
    for case in cases {
        let kit = toolset_kit();
        let mut h = Harness::new(&kit);
        h.options.use_tools = case.use_tools;
        h.options.forced = strings(case.forced);
        h.options.disabled_for_chat = strings(case.chat_disabled).into_iter().collect();
        h.config.tool_settings.disabled = strings(case.settings_disabled).into_iter().collect();
        let provider = ScriptedProvider::new([calls("", &[("c1", "count", r#"{"n":1}"#)]), text("done")]);
        let ran = h.run(&provider).await;

        assert_eq!(ran.requests.len(), 2, "{}", case.name);
        for (i, (tools, choice)) in [case.first, case.second].into_iter().enumerate() {
            assert_eq!(tool_names(&ran.requests[i]), strings(tools), "{}: tools of request {}", case.name, i + 1);
            assert_eq!(ran.requests[i].tool_choice, choice, "{}: choice of request {}", case.name, i + 1);
        }
        let notices = ran.notices(NoticeKind::ToolUnavailable);
        assert_eq!(notices.len(), case.unavailable.len(), "{}: {notices:?}", case.name);
        for name in case.unavailable {
            assert!(notices.iter().any(|n| n.contains(&format!("'{name}'"))), "{}: {notices:?}", case.name);
        }
        assert_eq!(ran.finish_reason(), FinishReason::Stop, "{}", case.name);
    }
}

#[tokio::test]
async fn calling_a_tool_switched_off_or_not_offered_does_not_run_and_says_which() {
    let kit = toolset_kit();
    let mut h = Harness::new(&kit);
    h.options.disabled_for_chat = strings(&["echo"]).into_iter().collect();
    let provider =
        ScriptedProvider::new([calls("", &[("e", "echo", r#"{"text":"x"}"#), ("s", "solo", "{}")]), text("done")]);
    let ran = h.run(&provider).await;
    assert_eq!(kit.count("echo") + kit.count("solo"), 0);
    // Switched off in this chat: said so (the model can ask the person), never "unknown".
    let off = ran.result("e");
    assert_eq!(off.status, ToolStatus::Skipped, "{off:?}");
    assert!(off.output.starts_with("echo is switched off in this chat."), "{off:?}");
    // Not offered to this turn at all: an error naming what is offered.
    let unknown = ran.result("s");
    assert_eq!(unknown.status, ToolStatus::Error, "{unknown:?}");
    assert!(unknown.output.contains("Available tools: count, slow"), "{unknown:?}");
}

// 4. ------------------------------------------------------------------------------------------

#[tokio::test]
async fn tool_prompt_snippets_are_in_the_system_prompt_only_when_the_tool_is_offered() {
    fn kit() -> Kit {
        Kit::new([
            count(),
            echo().with(|d| d.prompt = Some("ECHO SNIPPET".into())),
            solo().with(|d| d.prompt = Some("SOLO SNIPPET".into())),
        ])
    }
    struct Case {
        name: &'static str,
        base: Option<&'static str>,
        forced: &'static [&'static str],
        use_tools: bool,
        systems: [Option<&'static str>; 2],
    }
    let cases = [
        Case {
            name: "echo offered, exclusive solo not",
            base: Some("BASE"),
            forced: &[],
            use_tools: true,
            systems: [Some("BASE\n\nECHO SNIPPET"), Some("BASE\n\nECHO SNIPPET")],
        },
        Case {
            name: "no base prompt: the snippet alone",
            base: None,
            forced: &[],
            use_tools: true,
            systems: [Some("ECHO SNIPPET"), Some("ECHO SNIPPET")],
        },
        Case {
            name: "count forced: echo's snippet only from the second request",
            base: Some("BASE"),
            forced: &["count"],
            use_tools: true,
            systems: [Some("BASE"), Some("BASE\n\nECHO SNIPPET")],
        },
        Case {
            name: "solo forced: its snippet in every request, echo's never",
            base: Some("BASE"),
            forced: &["solo"],
            use_tools: true,
            systems: [Some("BASE\n\nSOLO SNIPPET"), Some("BASE\n\nSOLO SNIPPET")],
        },
        Case {
            name: "tools off: no snippets",
            base: Some("BASE"),
            forced: &[],
            use_tools: false,
            systems: [Some("BASE"), Some("BASE")],
        },
        Case {
            name: "tools off, no base: no system prompt at all",
            base: None,
            forced: &[],
            use_tools: false,
            systems: [None, None],
        },
    ];
    for case in cases {
        let kit = kit();
        let mut h = Harness::new(&kit);
        h.system_prompt = case.base.map(str::to_owned);
        h.options.forced = strings(case.forced);
        h.options.use_tools = case.use_tools;
        let provider = ScriptedProvider::new([calls("", &[("c", "count", r#"{"n":1}"#)]), text("done")]);
        let ran = h.run(&provider).await;
        assert_eq!(ran.requests.len(), 2, "{}", case.name);
        for (i, expected) in case.systems.iter().enumerate() {
            assert_eq!(ran.requests[i].system.as_deref(), *expected, "{}: request {}", case.name, i + 1);
        }
    }
}

#[tokio::test]
async fn a_prompt_several_offered_tools_share_is_added_once() {
    let shared = "SERVER INSTRUCTIONS";
    let kit =
        Kit::new([count().with(|d| d.prompt = Some(shared.into())), echo().with(|d| d.prompt = Some(shared.into()))]);
    let mut h = Harness::new(&kit);
    h.system_prompt = Some("BASE".into());
    let provider = ScriptedProvider::new([text("done")]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.requests[0].system.as_deref(), Some("BASE\n\nSERVER INSTRUCTIONS"));
}

#[tokio::test]
async fn images_a_tool_returns_reach_its_result_event_and_the_next_request() {
    use switchboard_core::{ToolDef, ToolImage, ToolOutput};
    let png = ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap();
    let image = png.clone();
    let def = ToolDef::new("snap", "Takes a picture.", serde_json::json!({"type": "object"}));
    let kit = Kit::new([TestTool::new(def, move |_, _| {
        let image = image.clone();
        async move { Ok(ToolOutput::text("[image: image/png]").with_images(vec![image])) }
    })]);
    let h = Harness::new(&kit);
    let provider = ScriptedProvider::new([calls("", &[("s", "snap", "{}")]), text("A logo.")]);
    let ran = h.run(&provider).await;
    let results: Vec<_> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolResult { images, .. } => Some(images.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results, [Some(vec![png.clone()])]);
    let sent = ran.requests[1].messages.iter().find_map(|m| match m {
        Message::Tool { images, .. } => Some(images.clone()),
        _ => None,
    });
    assert_eq!(sent, Some(vec![png]));
}

#[tokio::test]
async fn a_model_that_cannot_see_gets_a_note_instead_of_a_tools_images_and_the_person_still_sees_them() {
    use switchboard_core::{NoticeKind, ToolDef, ToolImage, ToolOutput};
    let png = ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap();
    let image = png.clone();
    let def = ToolDef::new("snap", "Takes a picture.", serde_json::json!({"type": "object"}));
    let kit = Kit::new([TestTool::new(def, move |_, _| {
        let image = image.clone();
        async move { Ok(ToolOutput::text("A picture.").with_images(vec![image])) }
    })]);
    let mut h = Harness::new(&kit);
    h.options.tool_images_left_out = Some("(Images left out: m can't see images.)".into());
    h.options.attachment_notices = vec!["m reads no PDFs, so 'a.pdf' was sent as its text.".into()];
    let provider = ScriptedProvider::new([calls("", &[("s", "snap", "{}")]), text("Noted.")]);
    let ran = h.run(&provider).await;
    assert!(
        ran.events.iter().any(|e| matches!(e, ChatEvent::ToolResult { images: Some(i), .. } if *i == [png.clone()]))
    );
    let sent = ran.requests[1].messages.iter().find_map(|m| match m {
        Message::Tool { images, content, .. } => Some((images.clone(), content.clone())),
        _ => None,
    });
    assert_eq!(sent, Some((vec![], "A picture.\n\n(Images left out: m can't see images.)".to_owned())));
    let notices: Vec<_> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Notice { kind: NoticeKind::Attachment, message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices, ["m reads no PDFs, so 'a.pdf' was sent as its text."]);
}

// 5. ------------------------------------------------------------------------------------------

#[tokio::test]
async fn identical_calls_run_once_and_each_call_id_gets_the_result() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([
        calls(
            "",
            &[
                ("a", "echo", r#"{"text":"same","tag":1}"#),
                ("b", "echo", r#"{ "tag": 1, "text": "same" }"#),
                ("c", "echo", r#"{"text":"other"}"#),
            ],
        ),
        text("done"),
    ]);
    let ran = Harness::new(&kit).run(&provider).await;

    assert_eq!(kit.count("echo"), 2, "the duplicate did not run");
    assert_eq!(ran.result("a"), ResultEv { id: "a".into(), status: ToolStatus::Ok, output: "same".into() });
    assert_eq!(ran.result("b"), ResultEv { id: "b".into(), status: ToolStatus::Ok, output: "same".into() });
    assert_eq!(ran.result("c").output, "other");
    let msgs = tool_messages(&ran.requests[1]);
    let answered: Vec<(&str, &str)> = msgs.iter().map(|m| (m.call_id.as_str(), m.content.as_str())).collect();
    assert_eq!(answered, vec![("a", "same"), ("b", "same"), ("c", "other")]);
    assert_eq!(ran.outcome.tool_calls_made, 3, "duplicates still count as calls made");
}

#[tokio::test]
async fn calls_over_the_per_round_cap_are_skipped_and_every_call_id_is_answered_in_order() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.max_tool_calls_per_round = 2;
    let provider = ScriptedProvider::new([
        calls(
            "",
            &[
                ("c1", "echo", r#"{"text":"1"}"#),
                ("c2", "echo", r#"{"text":"2"}"#),
                ("c2dup", "echo", r#"{"text":"2"}"#),
                ("c3", "echo", r#"{"text":"3"}"#),
            ],
        ),
        text("done"),
    ]);
    let ran = h.run(&provider).await;

    assert_eq!(kit.count("echo"), 2);
    assert_eq!(ran.result("c1").status, ToolStatus::Ok);
    assert_eq!(ran.result("c2").status, ToolStatus::Ok);
    assert_eq!(ran.result("c2dup").status, ToolStatus::Ok, "a duplicate does not count against the cap");
    let skipped = ran.result("c3");
    assert_eq!(skipped.status, ToolStatus::Skipped);
    assert!(skipped.output.contains("at most 2"), "{skipped:?}");

    let msgs = tool_messages(&ran.requests[1]);
    let ids: Vec<&str> = msgs.iter().map(|m| m.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c2dup", "c3"], "one tool message per call id, in call order");
    let errors: Vec<bool> = msgs.iter().map(|m| m.is_error).collect();
    assert_eq!(errors, [false, false, false, true]);
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
}

// 6. ------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn tool_errors_are_results_for_the_model_and_the_loop_goes_on() {
    struct Case {
        name: &'static str,
        tool: &'static str,
        args: &'static str,
        status: ToolStatus,
        contains: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "unknown tool lists the available names",
            tool: "nope",
            args: "{}",
            status: ToolStatus::Error,
            contains: &["Unknown tool 'nope'", "echo", "count", "slow"],
        },
        Case {
            name: "invalid JSON is echoed back",
            tool: "echo",
            args: r#"{"text": "unterminated"#,
            status: ToolStatus::Error,
            contains: &["Invalid JSON", r#"{"text": "unterminated"#],
        },
        Case {
            name: "a wrong type names the field",
            tool: "count",
            args: r#"{"n":"three"}"#,
            status: ToolStatus::Error,
            contains: &["Invalid arguments for 'count'", "/n"],
        },
        Case {
            name: "a missing required field names the field",
            tool: "count",
            args: "{}",
            status: ToolStatus::Error,
            contains: &["Invalid arguments for 'count'", "\"n\""],
        },
        Case {
            name: "the tool's own failure",
            tool: "fails",
            args: "{}",
            status: ToolStatus::Error,
            contains: &["disk on fire"],
        },
        Case {
            name: "a panic while running",
            tool: "panics",
            args: "{}",
            status: ToolStatus::Error,
            contains: &["'panics' crashed", "tool exploded"],
        },
        Case {
            name: "a panic in Tool::call before its future exists",
            tool: "panics_early",
            args: "{}",
            status: ToolStatus::Error,
            contains: &["'panics_early' crashed"],
        },
        Case {
            name: "a hang past the timeout",
            tool: "hang",
            args: "{}",
            status: ToolStatus::Timeout,
            contains: &["'hang' did not finish"],
        },
    ];
    for case in cases {
        let kit = Kit::standard();
        let mut h = Harness::new(&kit);
        h.config.tool_timeout = Duration::from_millis(100);
        let provider = ScriptedProvider::new([
            calls("Trying. ", &[("bad", case.tool, case.args), ("good", "echo", r#"{"text":"fine"}"#)]),
            text("Final answer."),
        ]);
        let started = Instant::now();
        let ran = h.run(&provider).await;

        let r = ran.result("bad");
        assert_eq!(r.status, case.status, "{}: {r:?}", case.name);
        for needle in case.contains {
            assert!(r.output.contains(needle), "{}: {:?} lacks {needle:?}", case.name, r.output);
        }
        assert_eq!(ran.result("good").status, ToolStatus::Ok, "{}: the other call still runs", case.name);
        assert_eq!(ran.finish_reason(), FinishReason::Stop, "{}", case.name);
        assert_eq!(ran.text(), "Trying. Final answer.", "{}", case.name);
        assert!(ran.errors().is_empty(), "{}: no turn error", case.name);
        assert_eq!(ran.requests.len(), 2, "{}", case.name);
        let msgs = tool_messages(&ran.requests[1]);
        assert_eq!(msgs[0].call_id, "bad");
        assert_eq!(msgs[0].content, r.output, "{}: the model sees the same text", case.name);
        assert!(msgs[0].is_error, "{}", case.name);
        assert!(started.elapsed() < Duration::from_secs(1), "{}", case.name);
    }
}

#[tokio::test(start_paused = true)]
async fn a_tools_own_timeout_overrides_the_loop_timeout() {
    let kit = Kit::new([slow().with(|d| d.timeout = Some(Duration::from_millis(50)))]);
    let mut h = Harness::new(&kit);
    h.config.tool_timeout = Duration::from_secs(10);
    let provider = ScriptedProvider::new([calls("", &[("s", "slow", r#"{"ms":1000}"#)]), text("done")]);
    let started = Instant::now();
    let ran = h.run(&provider).await;
    assert_eq!(ran.result("s").status, ToolStatus::Timeout);
    assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());
}

// 7. ------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn tools_of_a_round_run_concurrently_and_results_keep_call_order() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([
        calls("", &[("s1", "slow", r#"{"ms":300}"#), ("s2", "slow", r#"{"ms":200}"#), ("s3", "slow", r#"{"ms":100}"#)]),
        text("done"),
    ]);
    let started = Instant::now();
    let ran = Harness::new(&kit).run(&provider).await;
    let elapsed = started.elapsed();

    assert_eq!(kit.count("slow"), 3);
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(450), "concurrent, not 600 ms in sequence: {elapsed:?}");
    let finished: Vec<String> = ran.results().into_iter().map(|r| r.id).collect();
    assert_eq!(finished, ["s3", "s2", "s1"], "events arrive as calls finish");
    let msgs = tool_messages(&ran.requests[1]);
    let history: Vec<(&str, &str)> = msgs.iter().map(|m| (m.call_id.as_str(), m.content.as_str())).collect();
    assert_eq!(history, [("s1", "slept 300"), ("s2", "slept 200"), ("s3", "slept 100")]);
}

// 8. ------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_control_taking_tool_called_alone_streams_the_answer_and_ends_the_turn() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([
        calls("Let me research. ", &[("r", "research", "{}")]),
        text("a second request must not happen"),
    ]);
    let ran = Harness::new(&kit).run(&provider).await;

    assert_eq!(ran.finish_reason(), FinishReason::ToolTookControl);
    assert_eq!(ran.requests.len(), 1, "no model call after the tool took over");
    assert_eq!(kit.count("research"), 1);
    assert_eq!(ran.text(), format!("Let me research. {}", RESEARCH_ANSWER.concat()));
    let started = ran.position(|e| matches!(e, ChatEvent::ToolStarted { id } if id == "r")).unwrap();
    let answer = ran.position(|e| matches!(e, ChatEvent::TextDelta { text } if text == RESEARCH_ANSWER[0])).unwrap();
    assert!(started < answer, "the answer streams while the tool runs");
    assert_eq!(ran.result("r").status, ToolStatus::Ok);
    assert_eq!(ran.outcome.tool_calls_made, 1);
}

#[tokio::test]
async fn a_control_taking_tool_batched_with_others_runs_nothing_and_says_call_it_alone() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([
        calls("", &[("e", "echo", r#"{"text":"x"}"#), ("r", "research", "{}")]),
        text("ok, alone next time"),
    ]);
    let ran = Harness::new(&kit).run(&provider).await;

    assert_eq!(kit.count("research") + kit.count("echo"), 0);
    for id in ["e", "r"] {
        let r = ran.result(id);
        assert_eq!(r.status, ToolStatus::Error, "{r:?}");
        assert!(r.output.contains("'research'") && r.output.contains("alone"), "{r:?}");
    }
    assert_eq!(ran.requests.len(), 2);
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
    assert_eq!(ran.text(), "ok, alone next time");
}

// 9. ------------------------------------------------------------------------------------------

#[tokio::test]
async fn dry_run_returns_example_output_without_running_or_asking() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.options.dry_run = true;
    let approver = RecordingApprover::new(ApprovalDecision::Deny);
    h.approver = approver.clone();
    let provider = ScriptedProvider::new([
        calls("", &[("e", "echo", r#"{"text":"x"}"#), ("a", "ask_tool", "{}"), ("h", "hang", "{}")]),
        calls("", &[("e2", "echo", r#"{"text":"y"}"#)]),
        text("done"),
    ]);
    let ran = h.run(&provider).await;

    assert_eq!(kit.total(), 0, "nothing executed");
    assert_eq!(ran.result("e").output, "example echo output");
    assert_eq!(ran.result("a").output, "example ask output");
    assert_eq!(ran.result("e2").output, "example echo output");
    let hang = ran.result("h");
    assert_eq!(hang.status, ToolStatus::Ok);
    assert!(hang.output.contains("dry run"), "no example output: says so: {hang:?}");
    assert!(approver.requests().is_empty());
    assert_eq!(ran.notices(NoticeKind::DryRun).len(), 1, "one notice per turn");
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
}

// 10. -----------------------------------------------------------------------------------------

#[tokio::test]
async fn max_iterations_ends_with_one_last_call_with_tools_off() {
    for via_options in [false, true] {
        let kit = Kit::standard();
        let mut h = Harness::new(&kit);
        h.system_prompt = Some("BASE".into());
        if via_options {
            h.options.max_iterations = Some(2);
        } else {
            h.config.max_iterations = 2;
        }
        let provider = ScriptedProvider::new([
            calls("", &[("c1", "echo", r#"{"text":"1"}"#)]),
            calls("", &[("c2", "echo", r#"{"text":"2"}"#)]),
            text("Here is what I have."),
            text("a fourth request must not happen"),
        ]);
        let ran = h.run(&provider).await;

        assert_eq!(ran.requests.len(), 3, "via_options={via_options}");
        for request in &ran.requests[..2] {
            assert!(!request.tools.is_empty());
            assert_eq!(request.tool_choice, ToolChoice::Auto);
        }
        let last = &ran.requests[2];
        assert!(last.tools.is_empty());
        assert_eq!(last.tool_choice, ToolChoice::None);
        assert_eq!(last.system.as_deref(), Some("BASE"), "no tool snippets with tools off");
        assert_eq!(tool_messages(last).len(), 2, "both rounds' results are in the last request");
        assert_eq!(ran.notices(NoticeKind::MaxIterations).len(), 1);
        assert_eq!(ran.finish_reason(), FinishReason::MaxIterations);
        assert!(ran.text().ends_with("Here is what I have."));
    }
}

#[tokio::test]
async fn calls_made_in_the_tools_off_last_call_are_answered_as_skipped() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.max_iterations = 1;
    let provider = ScriptedProvider::new([
        calls("", &[("c1", "echo", r#"{"text":"1"}"#)]),
        calls("Still want to ", &[("c2", "echo", r#"{"text":"2"}"#)]),
    ]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.requests.len(), 2);
    assert_eq!(kit.count("echo"), 1);
    assert_eq!(ran.result("c2").status, ToolStatus::Skipped);
    assert_eq!(ran.finish_reason(), FinishReason::MaxIterations);
}

// 11. -----------------------------------------------------------------------------------------

#[tokio::test]
async fn usage_is_summed_over_iterations_and_tool_calls_are_counted() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([
        calls("", &[("a", "echo", r#"{"text":"1"}"#), ("b", "echo", r#"{"text":"2"}"#)]),
        calls("", &[("c", "count", r#"{"n":1}"#)]),
        text("done"),
    ]);
    let ran = Harness::new(&kit).run(&provider).await;

    let usages: Vec<_> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Usage { usage, total, .. } => Some((*usage, *total)),
            _ => None,
        })
        .collect();
    assert_eq!(
        usages,
        vec![(USAGE, usage_times(1)), (USAGE, usage_times(2)), (USAGE, usage_times(3))],
        "each iteration's usage with the running total"
    );
    assert_eq!(ran.outcome.usage, usage_times(3));
    assert_eq!(ran.outcome.tool_calls_made, 3);
    assert!(matches!(
        ran.events.last(),
        Some(ChatEvent::Done { usage, tool_calls_made: 3, .. }) if *usage == usage_times(3)
    ));
}

// 12. -----------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn stopping_while_a_tool_runs_ends_the_turn_promptly_and_keeps_what_was_produced() {
    let kit = Kit::standard();
    let h = Harness::new(&kit); // tool_timeout 60 s: only cancellation can end this quickly
    let provider = ScriptedProvider::new([
        calls("Working on it. ", &[("h", "hang", "{}"), ("s", "slow", r#"{"ms":10000}"#)]),
        text("a second request must not happen"),
    ]);
    cancel_after(&h.cancel, 50);
    let started = Instant::now();
    let ran = h.run(&provider).await;

    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert_eq!(ran.requests.len(), 1);
    assert_eq!(ran.text(), "Working on it. ");
    assert_eq!(ran.result("h").status, ToolStatus::Cancelled);
    assert_eq!(ran.result("s").status, ToolStatus::Cancelled);
    assert!(ran.errors().is_empty(), "stopping is not an error");
    assert_eq!(ran.outcome.usage, USAGE, "usage so far is kept");
}

#[tokio::test(start_paused = true)]
async fn stopping_while_the_provider_stalls_ends_the_turn_as_cancelled() {
    let kit = Kit::standard();
    let h = Harness::new(&kit);
    let provider = ScriptedProvider::new([Response::ThenStall(vec![delta("Partial ")])]);
    cancel_after(&h.cancel, 50);
    let started = Instant::now();
    let ran = h.run(&provider).await;

    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert_eq!(ran.text(), "Partial ");
    assert!(ran.errors().is_empty());
    assert_eq!(ran.requests.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn stopping_mid_response_answers_calls_already_received_without_running_them() {
    let kit = Kit::standard();
    let h = Harness::new(&kit);
    let provider = ScriptedProvider::new([Response::ThenStall(vec![
        delta("First "),
        tool_call("e", "echo", r#"{"text":"x"}"#, 6),
    ])]);
    cancel_after(&h.cancel, 50);
    let ran = h.run(&provider).await;

    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert_eq!(kit.count("echo"), 0);
    assert_eq!(ran.result("e").status, ToolStatus::Cancelled);
    assert_eq!(ran.text(), "First ");
}

#[tokio::test(start_paused = true)]
async fn stopping_while_waiting_for_approval_answers_the_call_and_ends_the_turn() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.approver = Arc::new(SilentApprover);
    let provider = ScriptedProvider::new([calls("", &[("a", "ask_tool", "{}")]), text("no")]);
    cancel_after(&h.cancel, 50);
    let ran = h.run(&provider).await;

    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert_eq!(kit.count("ask_tool"), 0);
    assert_eq!(ran.result("a").status, ToolStatus::Cancelled);
    assert!(ran.events.contains(&ChatEvent::ApprovalResolved { id: "a".into(), approved: false }));
    assert_eq!(ran.requests.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn stopping_during_a_retry_wait_ends_the_turn_as_cancelled() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.retry_base_delay = Duration::from_secs(5);
    h.config.retry_max_delay = Duration::from_secs(5);
    let provider =
        ScriptedProvider::new([fail(ProviderError::new(ErrorKind::Server, "boom").with_status(500)), text("too late")]);
    cancel_after(&h.cancel, 50);
    let started = Instant::now();
    let ran = h.run(&provider).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert_eq!(ran.requests.len(), 1);
}

// 13. -----------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_failure_before_any_output_is_retried_and_the_answer_delivered() {
    let kit = Kit::standard();
    let h = Harness::new(&kit);
    let rate_limited = ProviderError::new(ErrorKind::RateLimited, "Rate limited.")
        .with_status(429)
        .with_retry_after(Some(Duration::from_millis(10)));
    let provider = ScriptedProvider::new([fail(rate_limited), text("Answer after retry.")]);
    let ran = h.run(&provider).await;

    assert_eq!(ran.requests.len(), 2);
    assert_eq!(ran.requests[0], ran.requests[1], "the same request is sent again");
    let retrying = ran.notices(NoticeKind::Retrying);
    assert_eq!(retrying.len(), 1, "{retrying:?}");
    assert!(retrying[0].contains("Rate limited."), "{retrying:?}");
    assert_eq!(ran.text(), "Answer after retry.");
    assert!(ran.errors().is_empty());
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
    assert_eq!(ran.outcome.error, None);
}

#[tokio::test(start_paused = true)]
async fn retry_delays_are_capped_even_when_the_provider_asks_for_more() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.retry_max_delay = Duration::from_millis(50);
    let rate_limited =
        ProviderError::new(ErrorKind::RateLimited, "Slow down.").with_retry_after(Some(Duration::from_secs(600)));
    let provider = ScriptedProvider::new([fail(rate_limited), text("ok")]);
    let started = Instant::now();
    let ran = h.run(&provider).await;
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(ran.text(), "ok");
}

#[tokio::test(start_paused = true)]
async fn failures_that_must_not_be_retried_end_the_turn_with_an_error() {
    struct Case {
        name: &'static str,
        first: Response,
        max_retries: u32,
        requests: usize,
        error: (ErrorKind, bool),
        text: &'static str,
    }
    let server = || ProviderError::new(ErrorKind::Server, "Internal server error.").with_status(500);
    let cases = [
        Case {
            name: "an error after output started is never replayed",
            first: events(vec![delta("partial "), Err(server())]),
            max_retries: 3,
            requests: 1,
            error: (ErrorKind::Server, true),
            text: "partial ",
        },
        Case {
            name: "an auth error is not retryable",
            first: fail(ProviderError::new(ErrorKind::Auth, "The key was rejected.").with_status(401)),
            max_retries: 3,
            requests: 1,
            error: (ErrorKind::Auth, false),
            text: "",
        },
        Case {
            name: "a stream that ends without Finish is a network error, retried before output",
            first: events(vec![]),
            max_retries: 0,
            requests: 1,
            error: (ErrorKind::Network, true),
            text: "",
        },
    ];
    for case in cases {
        let kit = Kit::standard();
        let mut h = Harness::new(&kit);
        h.config.max_retries = case.max_retries;
        let provider = ScriptedProvider::new([case.first, text("a retry would have delivered this")]);
        let ran = h.run(&provider).await;

        assert_eq!(ran.requests.len(), case.requests, "{}", case.name);
        assert_eq!(ran.errors(), vec![case.error], "{}", case.name);
        assert!(ran.notices(NoticeKind::Retrying).is_empty(), "{}", case.name);
        assert_eq!(ran.text(), case.text, "{}", case.name);
        assert_eq!(ran.finish_reason(), FinishReason::Error, "{}", case.name);
        let n = ran.events.len();
        assert!(matches!(ran.events[n - 2], ChatEvent::Error { .. }), "{}: Error right before Done", case.name);
        assert_eq!(ran.outcome.error.as_ref().map(|e| e.kind), Some(case.error.0), "{}", case.name);
    }
}

#[tokio::test(start_paused = true)]
async fn retries_are_bounded_by_max_retries() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.max_retries = 2;
    let overloaded = || fail(ProviderError::new(ErrorKind::Overloaded, "Overloaded.").with_status(529));
    let provider = ScriptedProvider::new([overloaded(), overloaded(), overloaded(), text("never")]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.requests.len(), 3, "one request and two retries");
    assert_eq!(ran.notices(NoticeKind::Retrying).len(), 2);
    assert_eq!(ran.errors(), vec![(ErrorKind::Overloaded, true)]);
    assert_eq!(ran.finish_reason(), FinishReason::Error);
}

#[tokio::test(start_paused = true)]
async fn a_tool_round_then_a_failed_request_keeps_tool_results() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.max_retries = 0;
    let provider = ScriptedProvider::new([
        calls("", &[("e", "echo", r#"{"text":"x"}"#)]),
        fail(ProviderError::new(ErrorKind::ContextLength, "Too long.")),
    ]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.result("e").status, ToolStatus::Ok);
    assert_eq!(ran.errors(), vec![(ErrorKind::ContextLength, false)]);
    assert_eq!(ran.outcome.tool_calls_made, 1);
    assert_eq!(ran.outcome.usage, USAGE);
}

// 14. -----------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_silent_stream_ends_with_a_timeout_error_after_the_idle_timeout() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.idle_timeout = Duration::from_millis(100);
    h.config.max_retries = 0;
    let provider = ScriptedProvider::new([stall()]);
    let started = Instant::now();
    let ran = h.run(&provider).await;

    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(100) && elapsed < Duration::from_millis(200), "{elapsed:?}");
    assert_eq!(ran.errors(), vec![(ErrorKind::Timeout, true)]);
    assert_eq!(ran.finish_reason(), FinishReason::Error);
    assert_eq!(ran.requests.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_idle_timeout_before_output_is_retried_but_not_after_output() {
    // Before output: retried, and the retry succeeds.
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.idle_timeout = Duration::from_millis(100);
    let provider = ScriptedProvider::new([stall(), text("back")]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.requests.len(), 2);
    assert_eq!(ran.notices(NoticeKind::Retrying).len(), 1);
    assert_eq!(ran.text(), "back");

    // After output: the timeout ends the turn.
    let provider = ScriptedProvider::new([Response::ThenStall(vec![delta("half")]), text("never")]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.requests.len(), 1);
    assert_eq!(ran.errors(), vec![(ErrorKind::Timeout, true)]);
    assert_eq!(ran.text(), "half");
}

#[tokio::test(start_paused = true)]
async fn keep_alives_count_as_activity_for_the_idle_timeout() {
    use futures::StreamExt;
    // The model thinks for 400 ms, saying only "keep-alive" every 80 ms; idle timeout 100 ms.
    struct Thinking;
    impl switchboard_core::Provider for Thinking {
        fn kind(&self) -> &'static str {
            "thinking"
        }
        fn stream(&self, _request: switchboard_core::ProviderRequest) -> switchboard_core::ProviderStream {
            let mut items: Vec<Item> = (0..5).map(|_| Ok(ProviderEvent::KeepAlive)).collect();
            items.extend([delta("done thinking"), finish(StopReason::Stop)]);
            futures::stream::iter(items)
                .then(|item| async move {
                    tokio::time::sleep(Duration::from_millis(80)).await;
                    item
                })
                .boxed()
        }
    }
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.idle_timeout = Duration::from_millis(100);
    h.config.max_retries = 0;
    let engine = switchboard_core::Engine::new(
        h.config.clone(),
        Arc::clone(&kit.registry),
        Arc::new(switchboard_core::tool::NoSecrets),
    );
    let sink = Arc::new(switchboard_core::event::VecSink::default());
    let outcome = engine.run_turn(&Thinking, h.input(), sink.clone(), Arc::clone(&h.approver), h.cancel.clone()).await;
    assert_eq!(outcome.finish_reason, FinishReason::Stop, "{:?}", outcome.error);
    assert!(sink.events().iter().any(|e| matches!(e, ChatEvent::TextDelta { text } if text == "done thinking")));
}

#[tokio::test(start_paused = true)]
async fn a_slow_but_steady_stream_does_not_hit_the_idle_timeout() {
    use futures::StreamExt;
    // Each event arrives 80 ms after the last: 400 ms in all, idle timeout 100 ms.
    struct Dribble;
    impl switchboard_core::Provider for Dribble {
        fn kind(&self) -> &'static str {
            "dribble"
        }
        fn stream(&self, _request: switchboard_core::ProviderRequest) -> switchboard_core::ProviderStream {
            let items = vec![delta("a"), delta("b"), delta("c"), delta("d"), finish(StopReason::Stop)];
            futures::stream::iter(items)
                .then(|item| async move {
                    tokio::time::sleep(Duration::from_millis(80)).await;
                    item
                })
                .boxed()
        }
    }
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.config.idle_timeout = Duration::from_millis(100);
    let engine = switchboard_core::Engine::new(
        h.config.clone(),
        Arc::clone(&kit.registry),
        Arc::new(switchboard_core::tool::NoSecrets),
    );
    let sink = Arc::new(switchboard_core::event::VecSink::default());
    h.approver = Arc::new(switchboard_core::turn::FixedApprover(ApprovalDecision::Deny));
    let outcome = engine.run_turn(&Dribble, h.input(), sink.clone(), Arc::clone(&h.approver), h.cancel.clone()).await;
    assert_eq!(outcome.finish_reason, FinishReason::Stop);
    let text: String = sink
        .events()
        .iter()
        .filter_map(|e| match e {
            ChatEvent::TextDelta { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "abcd");
}

// 15. -----------------------------------------------------------------------------------------

#[tokio::test]
async fn a_denied_call_is_a_denied_result_and_does_not_run() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    let approver = RecordingApprover::new(ApprovalDecision::Deny);
    h.approver = approver.clone();
    let args = r#"{"path":"/tmp/x"}"#;
    let provider = ScriptedProvider::new([calls("", &[("a", "ask_tool", args)]), text("ok, I won't")]);
    let ran = h.run(&provider).await;

    assert_eq!(kit.count("ask_tool"), 0);
    let r = ran.result("a");
    assert_eq!(r.status, ToolStatus::Denied);
    let requested = ran
        .position(|e| {
            *e == ChatEvent::ApprovalRequested {
                id: "a".into(),
                name: "ask_tool".into(),
                source: ToolSource::Builtin,
                arguments: args.into(),
                preview: None,
                egress: None,
            }
        })
        .expect("ApprovalRequested with the exact arguments");
    let resolved = ran
        .position(|e| *e == ChatEvent::ApprovalResolved { id: "a".into(), approved: false })
        .expect("ApprovalResolved");
    let result = ran.position(|e| matches!(e, ChatEvent::ToolResult { id, .. } if id == "a")).unwrap();
    assert!(requested < resolved && resolved < result);
    assert!(ran.position(|e| matches!(e, ChatEvent::ToolStarted { .. })).is_none());
    let asked = approver.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (
            asked[0].conversation_id.as_str(),
            asked[0].call_id.as_str(),
            asked[0].name.as_str(),
            asked[0].arguments.as_str()
        ),
        (CONVERSATION, "a", "ask_tool", args)
    );
    assert!(tool_messages(&ran.requests[1])[0].is_error);
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
}

#[tokio::test]
async fn approval_decisions_decide_whether_later_calls_in_the_turn_ask_again() {
    let cases = [(ApprovalDecision::Once, 2), (ApprovalDecision::ForChat, 1), (ApprovalDecision::Always, 1)];
    for (decision, expected_asks) in cases {
        let kit = Kit::standard();
        let mut h = Harness::new(&kit);
        let approver = RecordingApprover::new(decision);
        h.approver = approver.clone();
        let provider = ScriptedProvider::new([
            calls("", &[("a1", "ask_tool", r#"{"path":"a"}"#)]),
            calls("", &[("a2", "ask_tool", r#"{"path":"b"}"#)]),
            text("done"),
        ]);
        let ran = h.run(&provider).await;

        assert_eq!(kit.count("ask_tool"), 2, "{decision:?}: both calls run");
        assert_eq!(approver.requests().len(), expected_asks, "{decision:?}");
        let asked = ran.events.iter().filter(|e| matches!(e, ChatEvent::ApprovalRequested { .. })).count();
        assert_eq!(asked, expected_asks, "{decision:?}");
        for id in ["a1", "a2"] {
            assert_eq!(ran.result(id).status, ToolStatus::Ok, "{decision:?}");
        }
        let resolved = ran.position(|e| *e == ChatEvent::ApprovalResolved { id: "a1".into(), approved: true });
        let started = ran.position(|e| matches!(e, ChatEvent::ToolStarted { id } if id == "a1"));
        assert!(resolved.unwrap() < started.unwrap(), "{decision:?}");
    }
}

#[tokio::test]
async fn approval_settings_and_prior_approvals_skip_the_question() {
    struct Case {
        name: &'static str,
        overrides: &'static [(&'static str, ApprovalPolicy)],
        approved_tools: &'static [&'static str],
        tool: &'static str,
        args: &'static str,
        status: ToolStatus,
        asks: usize,
    }
    let cases = [
        Case {
            name: "settings deny an ask tool: denied without asking",
            overrides: &[("ask_tool", ApprovalPolicy::Deny)],
            approved_tools: &[],
            tool: "ask_tool",
            args: "{}",
            status: ToolStatus::Denied,
            asks: 0,
        },
        Case {
            name: "settings deny an auto tool",
            overrides: &[("echo", ApprovalPolicy::Deny)],
            approved_tools: &[],
            tool: "echo",
            args: r#"{"text":"x"}"#,
            status: ToolStatus::Denied,
            asks: 0,
        },
        Case {
            name: "settings make an ask tool auto",
            overrides: &[("ask_tool", ApprovalPolicy::Auto)],
            approved_tools: &[],
            tool: "ask_tool",
            args: "{}",
            status: ToolStatus::Ok,
            asks: 0,
        },
        Case {
            name: "settings make an auto tool ask (the approver approves once)",
            overrides: &[("echo", ApprovalPolicy::Ask)],
            approved_tools: &[],
            tool: "echo",
            args: r#"{"text":"x"}"#,
            status: ToolStatus::Ok,
            asks: 1,
        },
        Case {
            name: "already approved for this chat: runs without asking",
            overrides: &[],
            approved_tools: &["ask_tool"],
            tool: "ask_tool",
            args: "{}",
            status: ToolStatus::Ok,
            asks: 0,
        },
        Case {
            name: "invalid arguments are rejected before asking",
            overrides: &[],
            approved_tools: &[],
            tool: "ask_tool",
            args: r#"{"path":5}"#,
            status: ToolStatus::Error,
            asks: 0,
        },
    ];
    for case in cases {
        let kit = Kit::standard();
        let mut h = Harness::new(&kit);
        h.config.tool_settings.approval =
            case.overrides.iter().map(|(n, p)| ((*n).to_owned(), *p)).collect::<HashMap<_, _>>();
        h.options.approved_tools = case.approved_tools.iter().map(|n| (*n).to_owned()).collect();
        let approver = RecordingApprover::new(ApprovalDecision::Once);
        h.approver = approver.clone();
        let provider = ScriptedProvider::new([calls("", &[("c", case.tool, case.args)]), text("done")]);
        let ran = h.run(&provider).await;

        assert_eq!(ran.result("c").status, case.status, "{}", case.name);
        assert_eq!(approver.requests().len(), case.asks, "{}", case.name);
        let requested = ran.events.iter().filter(|e| matches!(e, ChatEvent::ApprovalRequested { .. })).count();
        assert_eq!(requested, case.asks, "{}", case.name);
        assert_eq!(kit.count(case.tool), usize::from(case.status == ToolStatus::Ok), "{}", case.name);
    }
}

// 16. -----------------------------------------------------------------------------------------

#[tokio::test]
async fn tools_are_offered_under_provider_safe_names_and_run_under_their_own() {
    const ODD: &str = "my tool.v2";
    let odd = || {
        let mut def = echo().def.clone();
        def.name = ODD.into();
        def.description = "An oddly named echo.".into();
        TestTool::new(def, |args, _ctx| async move {
            Ok(switchboard_core::ToolOutput::text(format!("odd: {}", args["text"].as_str().unwrap_or_default())))
        })
    };
    for forced in [false, true] {
        let kit = Kit::new([echo(), odd()]);
        let mut h = Harness::new(&kit);
        if forced {
            h.options.forced = vec![ODD.into()];
        }
        // The model calls the odd tool by whatever name the request offered it under.
        let provider = ScriptedProvider::new([
            Response::Dynamic(Box::new(|req| {
                let spec = req.tools.iter().find(|t| t.description == "An oddly named echo.").expect("offered");
                vec![tool_call("o", &spec.name, r#"{"text":"hi"}"#, 0), finish(StopReason::ToolCalls)]
            })),
            text("done"),
        ]);
        let ran = h.run(&provider).await;

        let first = &ran.requests[0];
        for name in tool_names(first) {
            assert!(matches_provider_name_pattern(&name), "forced={forced}: {name:?}");
        }
        let safe = first.tools.iter().find(|t| t.description == "An oddly named echo.").unwrap().name.clone();
        assert_ne!(safe, ODD);
        if forced {
            assert_eq!(first.tool_choice, ToolChoice::Named(safe.clone()));
        }
        assert_eq!(ran.tool_calls(), vec![("o".into(), ODD.into(), 0, 1, 0)], "forced={forced}");
        let call_event = ran.events.iter().find(|e| matches!(e, ChatEvent::ToolCall { .. })).unwrap();
        assert!(matches!(call_event, ChatEvent::ToolCall { source: ToolSource::Builtin, .. }));
        assert_eq!(kit.count(ODD), 1, "forced={forced}");
        assert_eq!(kit.count("echo"), 0);
        assert_eq!(ran.result("o"), ResultEv { id: "o".into(), status: ToolStatus::Ok, output: "odd: hi".into() });
        assert_eq!(ran.finish_reason(), FinishReason::Stop);

        // The history sent back speaks the same names as the tools it offers.
        let second = &ran.requests[1];
        assert_eq!(
            second.messages[1..],
            [
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("o", &safe, r#"{"text":"hi"}"#)],
                    state: None
                },
                Message::Tool {
                    images: Default::default(),
                    call_id: "o".into(),
                    name: safe.clone(),
                    content: "odd: hi".into(),
                    is_error: false
                },
            ],
            "forced={forced}"
        );
        assert!(tool_names(second).contains(&safe), "forced={forced}");
    }
}

#[tokio::test]
async fn tool_names_in_earlier_history_are_sent_provider_safe_even_when_not_offered() {
    let kit = Kit::new([echo()]);
    let mut h = Harness::new(&kit);
    h.history = vec![
        Message::user("before"),
        Message::Assistant {
            text: "Using it.".into(),
            tool_calls: vec![call("old", "gone tool.v1", "{}")],
            state: None,
        },
        Message::Tool {
            images: Default::default(),
            call_id: "old".into(),
            name: "gone tool.v1".into(),
            content: "r".into(),
            is_error: false,
        },
        Message::Assistant { text: "Done before.".into(), tool_calls: vec![], state: None },
        Message::user(USER_TEXT),
    ];
    for use_tools in [true, false] {
        h.options.use_tools = use_tools;
        let provider = ScriptedProvider::new([text("ok")]);
        let ran = h.run(&provider).await;
        let mut names = Vec::new();
        for m in &ran.requests[0].messages {
            match m {
                Message::Assistant { tool_calls, .. } => names.extend(tool_calls.iter().map(|c| c.name.clone())),
                Message::Tool { name, .. } => names.push(name.clone()),
                Message::User { .. } => {}
            }
        }
        assert_eq!(names.len(), 2);
        assert_eq!(names[0], names[1], "call and result agree");
        assert!(matches_provider_name_pattern(&names[0]), "use_tools={use_tools}: {names:?}");
        assert!(!tool_names(&ran.requests[0]).contains(&names[0]), "not offered");
    }
}

#[tokio::test]
async fn a_tool_event_of_an_unknown_name_has_the_unknown_source() {
    let kit = Kit::standard();
    let provider = ScriptedProvider::new([calls("", &[("x", "ghost", "{}")]), text("done")]);
    let ran = Harness::new(&kit).run(&provider).await;
    assert!(ran.events.iter().any(|e| matches!(
        e,
        ChatEvent::ToolCall { name, source: ToolSource::Unknown, .. } if name == "ghost"
    )));
}

// 17. -----------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn stopping_while_waiting_for_approval_counts_each_call_of_the_round_once() {
    let kit = Kit::standard();
    let mut h = Harness::new(&kit);
    h.approver = Arc::new(SilentApprover);
    let provider = ScriptedProvider::new([calls("", &[("e", "echo", r#"{"text":"x"}"#), ("a", "ask_tool", "{}")])]);
    cancel_after(&h.cancel, 50);
    let ran = h.run(&provider).await;

    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert_eq!(ran.outcome.tool_calls_made, 2);
    assert_eq!(kit.total(), 0);
    for id in ["e", "a"] {
        assert_eq!(ran.result(id).status, ToolStatus::Cancelled, "{id}");
    }
}

#[tokio::test]
async fn a_tool_can_run_a_child_turn_on_an_engine_from_inside_its_call() {
    // Agents-as-tools: the child turn is the same driver, re-entered with its own sink.
    let def = switchboard_core::ToolDef::new("agent", "Runs a child turn.", serde_json::json!({"type": "object"}));
    let agent = TestTool::new(def, |_args, _ctx| async move {
        let child = Kit::new([echo()]);
        let engine = switchboard_core::Engine::new(
            test_config(),
            Arc::clone(&child.registry),
            Arc::new(switchboard_core::tool::NoSecrets),
        );
        let provider =
            ScriptedProvider::new([calls("", &[("inner", "echo", r#"{"text":"deep"}"#)]), text("child answer")]);
        let sink = Arc::new(switchboard_core::event::VecSink::default());
        let mut input = Harness::new(&child).input();
        input.message_id = "child-msg".into();
        let approver = Arc::new(switchboard_core::turn::FixedApprover(ApprovalDecision::Deny));
        let outcome =
            engine.run_turn(&provider, input, sink.clone(), approver, switchboard_core::CancellationToken::new()).await;
        assert_eq!(outcome.finish_reason, FinishReason::Stop);
        let inner_results =
            sink.events().iter().filter(|e| matches!(e, ChatEvent::ToolResult { id, .. } if id == "inner")).count();
        Ok(switchboard_core::ToolOutput::text(format!("{} ({inner_results} inner result)", "child answer")))
    });
    let kit = Kit::new([agent]);
    let provider = ScriptedProvider::new([calls("", &[("outer", "agent", "{}")]), text("done")]);
    let ran = Harness::new(&kit).run(&provider).await;

    assert_eq!(ran.result("outer").output, "child answer (1 inner result)");
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
    assert_eq!(ran.text(), "done", "the child's events stay in the child's sink");
}

#[tokio::test]
async fn a_sub_agents_usage_counts_toward_the_turn_and_its_calls_ask_the_turns_approver() {
    // The agent tool runs a child turn whose `ask_tool` call needs the person: it asks through
    // the parent's approver, and the child's usage (from its nested `done`) joins the parent's.
    let def = switchboard_core::ToolDef::new("agent", "Runs a child turn.", serde_json::json!({"type": "object"}));
    let agent = TestTool::new(def, |_args, ctx| async move {
        let child = Kit::new([ask_tool()]);
        let engine = switchboard_core::Engine::new(
            test_config(),
            Arc::clone(&child.registry),
            Arc::new(switchboard_core::tool::NoSecrets),
        );
        let provider = ScriptedProvider::new([calls("", &[("c1", "ask_tool", "{}")]), text("child answer")]);
        let nested = ctx.clone();
        let sink: Arc<dyn switchboard_core::EventSink> = Arc::new(move |e: ChatEvent| nested.nested("Child[1]", e));
        let mut input = Harness::new(&child).input();
        input.message_id = "child-msg".into();
        let outcome = engine.run_turn(&provider, input, sink, ctx.approver(), ctx.cancel.child_token()).await;
        assert_eq!(outcome.usage, usage_times(2));
        Ok(switchboard_core::ToolOutput::text("child answer"))
    });
    let kit = Kit::new([agent]);
    let mut h = Harness::new(&kit);
    let approver = RecordingApprover::new(ApprovalDecision::Once);
    h.approver = approver.clone();
    let provider = ScriptedProvider::new([calls("", &[("outer", "agent", "{}")]), text("done")]);
    let ran = h.run(&provider).await;

    assert_eq!(ran.result("outer").output, "child answer");
    let asked: Vec<String> = approver.requests().into_iter().map(|r| r.call_id).collect();
    assert_eq!(asked, ["c1"], "the child's call was put to the turn's approver");
    // Two parent iterations and the child's two.
    assert_eq!(ran.outcome.usage, usage_times(4));
    assert!(matches!(ran.events.last(), Some(ChatEvent::Done { usage, .. }) if *usage == usage_times(4)));
}
