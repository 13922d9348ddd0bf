//! The model catalogue as a person uses it: a refresh from a server (a local one here, never the
//! internet) replaces the bundled snapshot and is kept for the next start; a corrupt, newer,
//! oversized, redirected or failed download changes nothing; and what a model's window, output
//! limit and prices are comes from the profile, else the server's listing, else the catalogue,
//! else a safe default that says so.

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use std::sync::Arc;
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::catalogue::CatalogueSource;
use switchboard_store::Store;

/// A catalogue in LiteLLM's format that knows a model the bundled snapshot does not.
const FRESH: &str = r#"{
  "sample_spec": {"max_input_tokens": "max input tokens", "input_cost_per_token": 0.0},
  "switchboard-test-model": {
    "litellm_provider": "openai", "mode": "chat",
    "max_input_tokens": 50000, "max_output_tokens": 5000,
    "input_cost_per_token": 0.000001, "output_cost_per_token": 0.000004,
    "supports_function_calling": true
  },
  "gpt-4o": {
    "litellm_provider": "openai", "mode": "chat",
    "max_input_tokens": 128000, "max_output_tokens": 16384,
    "input_cost_per_token": 0.0000025, "output_cost_per_token": 0.00001
  }
}"#;

/// Serves the catalogue variants on a loopback port; its base URL.
async fn server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app =
        Router::new()
            .route("/fresh.json", get(|| async { ([(header::CONTENT_TYPE, "application/json")], FRESH) }))
            .route("/corrupt.json", get(|| async { "{\"gpt-4o\": {\"max_input_tokens\": 12" }))
            .route("/array.json", get(|| async { "[1, 2, 3]" }))
            .route("/missing.json", get(|| async { (StatusCode::NOT_FOUND, "no such file") }))
            .route("/huge.json", get(|| async { vec![b' '; (16 << 20) + 1] }))
            .route("/same-origin.json", get(|| async { Redirect::temporary("/fresh.json") }))
            .route(
                "/elsewhere.json",
                get(move || async move {
                    Redirect::temporary(&format!("http://localhost:{port}/fresh.json")).into_response()
                }),
            );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://127.0.0.1:{port}")
}

fn on_disk(dir: &std::path::Path) -> Service {
    Service::new(Store::open(&dir.join("switchboard.db")).unwrap(), Arc::new(MemoryStore::new())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_is_used_from_then_on_and_at_the_next_start() {
    let base = server().await;
    let dir = tempfile::tempdir().unwrap();
    let service = on_disk(dir.path());
    let bundled = service.catalogue_info();
    assert_eq!(bundled.source, CatalogueSource::Bundled);
    assert!(bundled.models > 100, "{bundled:?}");
    assert_eq!(bundled.problem, None);

    let info = service.refresh_catalogue_from(&format!("{base}/fresh.json")).await.unwrap();
    assert_eq!((info.source, info.models), (CatalogueSource::Refreshed, 2));
    assert_eq!(service.catalogue_info(), info);

    let restarted = on_disk(dir.path());
    assert_eq!(restarted.catalogue_info(), info, "the refreshed file is used at the next start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_download_changes_nothing_and_says_why() {
    let base = server().await;
    let dir = tempfile::tempdir().unwrap();
    let service = on_disk(dir.path());
    let good = service.refresh_catalogue_from(&format!("{base}/fresh.json")).await.unwrap();
    for (path, says) in [
        ("corrupt.json", "could not be read"),
        ("array.json", "could not be read"),
        ("missing.json", "404"),
        ("huge.json", "larger than 16 MiB"),
        ("elsewhere.json", "redirects to another address"),
    ] {
        let e = service.refresh_catalogue_from(&format!("{base}/{path}")).await.unwrap_err();
        assert!(e.message.contains(says), "{path}: {e}");
        assert_eq!(service.catalogue_info(), good, "{path}: the last good catalogue stays");
        assert_eq!(on_disk(dir.path()).catalogue_info(), good, "{path}: and stays saved");
    }
    let followed = service.refresh_catalogue_from(&format!("{base}/same-origin.json")).await.unwrap();
    assert_eq!(followed.models, 2, "a redirect within the origin is followed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_saved_catalogue_falls_back_to_the_bundled_one_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model_catalogue.json"), b"{ not json").unwrap();
    let info = on_disk(dir.path()).catalogue_info();
    assert_eq!(info.source, CatalogueSource::Bundled);
    let problem = info.problem.expect("the person is told");
    assert!(problem.contains("could not be read") && problem.contains("bundled snapshot is used"), "{problem}");
}

/// An OpenRouter-style listing: one model with a window, output limit and per-token prices, one
/// with a price that "varies", one with nothing but its id.
async fn listing_server() -> String {
    let listing = serde_json::json!({"data": [
        {"id": "vendor/listed", "context_length": 64000,
         "top_provider": {"max_completion_tokens": 4000},
         "pricing": {"prompt": "0.000002", "completion": "0.000008"}},
        {"id": "openrouter/auto", "context_length": 2000000, "pricing": {"prompt": "-1", "completion": "-1"}},
        {"id": "openai/gpt-4o"}
    ]});
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new().route("/v1/models", get(move || async move { axum::Json(listing) }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://127.0.0.1:{port}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_wins_over_the_listing_which_wins_over_the_catalogue_and_is_kept_for_the_next_start() {
    use switchboard_core::Prices;
    use switchboard_service::ipc::{ProfileOptions, ProviderProfile};
    use switchboard_service::models::SpecSource;

    let base_url = listing_server().await;
    let dir = tempfile::tempdir().unwrap();
    let service = on_disk(dir.path());
    let priced = Prices { input: 9.0, output: 9.0, ..Prices::default() };
    let mut profile = ProviderProfile {
        name: "router".into(),
        kind: "openai".into(),
        base_url: base_url.clone(),
        model: None,
        options: ProfileOptions::default(),
    };
    service.add_provider(&profile, true).unwrap();
    let before = service.model_spec(&profile, "vendor/listed");
    assert_eq!(before.source, SpecSource::Default, "not listed yet: the safe default, said to be one");
    assert!(before.window_note("vendor/listed").is_some());

    let ids = service.models(Some("router")).await.unwrap();
    assert_eq!(ids, ["openai/gpt-4o", "openrouter/auto", "vendor/listed"]);
    let check = |service: &Service, profile: &ProviderProfile| {
        let m = service.model_spec(profile, "vendor/listed");
        assert_eq!((m.spec.context_window, m.source), (Some(64_000), SpecSource::Listing));
        assert_eq!((m.spec.max_output, m.max_output_source), (Some(4_000), Some(SpecSource::Listing)));
        let stated = Prices { input: 2.0, output: 8.0, ..Prices::default() };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let p = m.spec.prices.unwrap();
        assert!(close(p.input, stated.input) && close(p.output, stated.output), "{p:?}");
        assert_eq!(
            (m.prices_source, m.free),
            (Some(SpecSource::Listing), false),
            "a stated price beats 'local is free'"
        );
        let auto = service.model_spec(profile, "openrouter/auto");
        assert_eq!((auto.spec.context_window, auto.source), (Some(2_000_000), SpecSource::Listing));
        assert!(auto.free, "a price that varies is not stated: a loopback server is then free");
        let catalogued = service.model_spec(profile, "openai/gpt-4o");
        assert_eq!((catalogued.spec.context_window, catalogued.source), (Some(128_000), SpecSource::Catalogue));
    };
    check(&service, &profile);
    check(&on_disk(dir.path()), &profile);

    profile.options = ProfileOptions { context_window: Some(10_000), prices: Some(priced), ..Default::default() };
    service.add_provider(&profile, true).unwrap();
    let m = service.model_spec(&profile, "vendor/listed");
    assert_eq!((m.spec.context_window, m.source), (Some(10_000), SpecSource::Profile));
    assert_eq!((m.spec.prices, m.prices_source, m.free), (Some(priced), Some(SpecSource::Profile), false));
    assert_eq!(m.max_output_source, Some(SpecSource::Listing), "each field from its strongest source");

    let plain = ProviderProfile { options: ProfileOptions::default(), ..profile.clone() };
    let moved = ProviderProfile { base_url: "http://127.0.0.1:9/v1".into(), ..plain.clone() };
    assert_eq!(
        service.model_spec(&moved, "openrouter/auto").source,
        SpecSource::Default,
        "a listing is of its address"
    );
    service.remove_provider("router").unwrap();
    service.add_provider(&plain, true).unwrap();
    assert_eq!(service.model_spec(&plain, "openrouter/auto").source, SpecSource::Default, "removed with its profile");
    assert_eq!(on_disk(dir.path()).model_spec(&plain, "openrouter/auto").source, SpecSource::Default);
}
