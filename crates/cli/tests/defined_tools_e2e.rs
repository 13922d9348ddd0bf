//! Tools people define without code, through the CLI and the loop: an HTTP API tool whose key
//! goes only to its own API after the person confirmed it, and a command tool that asks first,
//! shows the exact command line and keeps each placeholder one argument.

mod common;

use axum::extract::{Path, RawQuery};
use axum::http::HeaderMap;
use axum::routing::get;
use common::*;
use std::sync::{Arc, Mutex};
use switchboard_mock_provider::{Reply, Script};

/// What the API saw: the raw path, the raw query and the key header.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

/// A weather API on a local port that echoes the key it was sent back (a careless debug field).
async fn weather_api() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/v1/weather/{city}",
        get(move |Path(city): Path<String>, RawQuery(query): RawQuery, headers: HeaderMap, uri: axum::http::Uri| {
            let record = record.clone();
            async move {
                let key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                record.lock().unwrap().push((uri.path().to_owned(), query.unwrap_or_default(), key.clone()));
                axum::Json(serde_json::json!({ "data": { "city": city, "celsius": 21 }, "debug": { "key": key } }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

const KEY: &str = "wk-live-0123456789abcdef";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_tool_sends_its_key_only_once_confirmed_and_only_to_its_api() {
    let (api, seen) = weather_api().await;
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "weather", r#"{"city":"São Paulo/../x"}"#),
        Reply::text("It is 21 °C."),
    ]))
    .await;
    let url = format!("{api}/v1/weather/{{{{city}}}}");
    let add = |yes: bool| {
        let mut args = vec![
            "tools",
            "add-http",
            "weather",
            "--url",
            &url,
            "--description",
            "Current weather in a city.",
            "--query",
            "units=metric",
            "--header",
            "X-Api-Key={{secret:weather}}",
            "--pointer",
            "/data",
            "--allow-local",
        ];
        if yes {
            args.push("--yes");
        }
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };

    // Without --yes the key's destination is shown and the tool waits.
    let args = add(false);
    let out = env.run(&args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("Let the HTTP tool 'weather' send your key 'weather' to {api}")),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("needs approval"), "{}", stdout(&out));
    let out = env.run(&["tools", "list"]).await;
    assert!(!stdout(&out).contains("weather"), "not offered before it is allowed: {}", stdout(&out));

    let out = env.run(&["tools", "approve", "weather", "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("ready"), "{}", stdout(&out));
    let out = env.run(&["tools", "list"]).await;
    assert!(stdout(&out).contains("weather") && stdout(&out).contains("HTTP tool"), "{}", stdout(&out));

    // The model calls it: the key reaches the API, the path parameter stays one segment (no
    // dot-segment escapes it), and the key the API echoes never reaches the model, the events or
    // the store.
    let out = env
        .command(&["chat", "--json", "What is the weather in São Paulo?"])
        .env("SWITCHBOARD_KEY_WEATHER", KEY)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<serde_json::Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let result = of_type(&events, "toolResult");
    assert_eq!(result.len(), 1, "{events:?}");
    assert_eq!(result[0]["status"], "ok", "{events:?}");
    let text = result[0]["output"].as_str().unwrap();
    assert!(text.contains("\"celsius\": 21"), "the pointer's part, pretty-printed: {text}");
    assert!(!text.contains("debug"), "only the pointer's part: {text}");
    let recorded = seen.lock().unwrap().clone();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].0, "/v1/weather/S%C3%A3o%20Paulo%2F..%2Fx", "one encoded segment: {recorded:?}");
    assert_eq!(recorded[0].1, "units=metric");
    assert_eq!(recorded[0].2, KEY, "the key reached its own API");
    assert!(!stdout(&out).contains(KEY), "the key never appears in the events");

    // "Try it" shows the exact request with the key masked, and the answer with the echo masked.
    let out = env
        .command(&["tools", "try", "weather", "--args", r#"{"city":"Oslo"}"#])
        .env("SWITCHBOARD_KEY_WEATHER", KEY)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("GET {api}/v1/weather/Oslo?units=metric")), "{}", stdout(&out));
    assert!(!stdout(&out).contains(KEY), "{}", stdout(&out));
    let conversation = of_type(&events, "started")[0]["conversationId"].as_str().unwrap().to_owned();
    let stored = env.show_json(&conversation).await;
    assert!(
        stored.to_string().contains("celsius") && !stored.to_string().contains(KEY),
        "nothing stored holds the key"
    );

    // Without the key, the call says which key to add, and nothing is sent.
    env.mock.push(Reply::tool_call("c2", "weather", r#"{"city":"Lima"}"#));
    env.mock.push(Reply::text("No key."));
    let (out, events) = env.chat_json(&["And in Lima?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = of_type(&events, "toolResult");
    assert!(result[0]["output"].as_str().unwrap().contains("needs the key 'weather'"), "{events:?}");
    assert_eq!(seen.lock().unwrap().len(), 2, "the try-it call, and nothing more");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tool_asks_first_with_the_exact_command_line_and_keeps_each_placeholder_one_argument() {
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "shout", r#"{"text":"a b; rm -rf / $(id)"}"#),
        Reply::text("Denied, fine."),
        Reply::tool_call("c2", "shout", r#"{"text":"a b; rm -rf / $(id)"}"#),
        Reply::text("Done."),
    ]))
    .await;
    let add = [
        "tools",
        "add-command",
        "shout",
        "--description",
        "Prints its text in brackets.",
        "--example",
        "<example>",
        "--",
        "printf",
        "<%s>",
        "{{text}}",
    ];

    // Without --yes: the exact command line is shown, nothing is offered.
    let out = env.run(&add).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("as the tool 'shout'"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("printf '<%s>' '{{text}}'") || stderr(&out).contains("printf '<%s>' {{text}}"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("needs approval"), "{}", stdout(&out));

    let mut confirmed: Vec<&str> = add.to_vec();
    confirmed.insert(3, "--yes");
    let out = env.run(&confirmed).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("ready, asks first"), "{}", stdout(&out));

    // It asks first: with no terminal to ask, the call is denied, and the question carried the
    // exact command line that would have run.
    let (out, events) = env.chat_json(&["Shout something"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = of_type(&events, "approvalRequested");
    assert_eq!(asked.len(), 1, "{events:?}");
    assert_eq!(asked[0]["source"]["kind"], "command");
    let preview = asked[0]["preview"].as_str().unwrap_or_default();
    assert!(preview.starts_with("printf '<%s>' 'a b; rm -rf / $(id)'   (in "), "{asked:?}");
    assert_eq!(of_type(&events, "toolResult")[0]["status"], "denied");

    // Allowed, it runs with the text as one argument, untouched by any shell.
    let (out, events) = env.chat_json(&["--approve-all", "Shout something"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = of_type(&events, "toolResult");
    assert_eq!(result[0]["status"], "ok", "{events:?}");
    assert_eq!(result[0]["output"], "<a b; rm -rf / $(id)>");

    // A dry run gives the model the declared example instead of running anything.
    env.mock.push(Reply::tool_call("c3", "shout", r#"{"text":"dry"}"#));
    env.mock.push(Reply::text("Dry."));
    let (out, events) = env.chat_json(&["--dry-run-tools", "Shout something"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(of_type(&events, "toolResult")[0]["output"], "<example>", "{events:?}");

    // The file edited behind the app's back changes the command: it waits for approval again.
    let path = env.data_dir().join("tools.json");
    let mut file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    file["commandTools"][0]["argv"] = serde_json::json!(["sh", "-c", "echo changed"]);
    std::fs::write(&path, file.to_string()).unwrap();
    let out = env.run(&["tools", "defined"]).await;
    assert!(stdout(&out).contains("shout") && stdout(&out).contains("needs approval"), "{}", stdout(&out));
    let out = env.run(&["tools", "list"]).await;
    assert!(!stdout(&out).contains("shout"), "{}", stdout(&out));
}

/// A local stand-in for two operations of the real petstore document.
async fn petstore_api() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/v2/pet/{id}",
        get(move |Path(id): Path<String>, headers: HeaderMap, uri: axum::http::Uri| {
            let record = record.clone();
            async move {
                let key = headers.get("api_key").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                record.lock().unwrap().push((uri.path().to_owned(), String::new(), key));
                axum::Json(
                    serde_json::json!({ "id": id.parse::<i64>().unwrap_or(0), "name": "Rex", "status": "available" }),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openapi_documents_operations_become_tools_the_model_calls() {
    let document = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@readme/oas-examples/3.0/json/petstore.json");
    assert!(document.exists(), "{} is missing: run `npm ci`", document.display());
    let (api, seen) = petstore_api().await;
    let env =
        Env::new(Script::new([Reply::tool_call("c1", "getPetById", r#"{"petId":7}"#), Reply::text("Pet 7 is Rex.")]))
            .await;
    let server = format!("{api}/v2");
    let document = document.display().to_string();
    let import = [
        "tools",
        "import-openapi",
        "petstore",
        &document,
        "--server",
        &server,
        "--only",
        "getPetById,addPet",
        "--allow-local",
    ];

    // Its operations send the document's API key: nothing is offered until that is allowed.
    let out = env.run(&import).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("send your key 'petstore-api_key' to {api}")), "{}", stderr(&out));
    assert!(stdout(&out).contains("[x] getPetById") && stdout(&out).contains("[ ] deletePet"), "{}", stdout(&out));
    assert!(stdout(&out).contains("note: "), "what is not supported is said: {}", stdout(&out));
    let out = env.run(&["tools", "list"]).await;
    assert!(!stdout(&out).contains("getPetById"), "{}", stdout(&out));

    let mut confirmed = import.to_vec();
    confirmed.push("--yes");
    let out = env.run(&confirmed).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["tools", "list"]).await;
    let listed = stdout(&out);
    assert!(listed.contains("getPetById") && listed.contains("OpenAPI 'petstore'"), "{listed}");
    assert!(listed.contains("addPet") && !listed.contains("deletePet"), "only the chosen operations: {listed}");

    // The model calls an operation: the key goes in the scheme's header, to the chosen server.
    let out = env
        .command(&["chat", "--json", "What is pet 7?"])
        .env("SWITCHBOARD_KEY_PETSTORE_API_KEY", "pk-0123456789")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<serde_json::Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let result = of_type(&events, "toolResult");
    assert_eq!(result[0]["status"], "ok", "{events:?}");
    assert!(result[0]["output"].as_str().unwrap().contains("\"name\": \"Rex\""), "{events:?}");
    assert_eq!(seen.lock().unwrap().clone(), [("/v2/pet/7".to_owned(), String::new(), "pk-0123456789".to_owned())]);

    // Removing the API removes its tools and its kept copy.
    let out = env.run(&["tools", "remove", "petstore"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.data_dir().join("openapi/petstore.json").exists());
    let out = env.run(&["tools", "list"]).await;
    assert!(!stdout(&out).contains("getPetById"), "{}", stdout(&out));
}
