//! OpenAPI import against real public documents: the examples of the npm package
//! `@readme/oas-examples` (a root devDependency; `npm ci` installs it into `node_modules`).
//! Every OpenAPI 3.0 and 3.1 document in it, JSON and YAML, converts; every operation becomes a
//! definition that passes its check and a schema the registry accepts; Swagger 2.0 ones are
//! refused with a clear message. Then two generated petstore tools are called against a local
//! axum server. Never the internet.

use axum::Json;
use axum::Router;
use axum::extract::Path as UrlPath;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use switchboard_core::tool::{SecretValue, Secrets};
use switchboard_core::{Tool, ToolContext, ToolRegistry};
use switchboard_tools::http_tool::is_tool_name;
use switchboard_tools::openapi::{self, DEFAULT_SELECTED_MAX, OpenApiError, SchemeKind};
use switchboard_tools::web::{AddressPolicy, Resolver, StandardPolicy};
use switchboard_tools::{Converted, HttpTool, OpenApiOptions};

/// The package's folder; a missing one fails with what to run.
fn examples() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules/@readme/oas-examples");
    assert!(
        dir.join("3.0").is_dir() && dir.join("3.1").is_dir(),
        "{} is missing: run `npm ci` in the repository root (the OpenAPI tests read the real documents of the devDependency @readme/oas-examples)",
        dir.display()
    );
    dir
}

/// Every `.json`, `.yaml` and `.yml` file under `dir`, sorted.
fn documents(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("json" | "yaml" | "yml")) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn read(relative: &str) -> Value {
    let text = std::fs::read_to_string(examples().join(relative)).unwrap();
    openapi::parse(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn options(name: &str) -> OpenApiOptions {
    OpenApiOptions { document_name: name.into(), ..OpenApiOptions::default() }
}

/// Converts `doc`; a document without an absolute server is converted again with one chosen,
/// as the person would.
fn convert_all(doc: &Value, name: &str) -> Converted {
    let c = openapi::convert(doc, &options(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    if c.notes.iter().any(|n| n.contains("names no absolute http(s) server")) {
        let chosen = OpenApiOptions { server: Some("https://api.example.com/v1".into()), ..options(name) };
        return openapi::convert(doc, &chosen).unwrap();
    }
    c
}

/// Checks what every conversion must hold; the number of operations.
fn check_converted(c: &Converted, file: &str) -> usize {
    let mut registry = ToolRegistry::new();
    let mut names = BTreeSet::new();
    for op in &c.operations {
        let t = &op.tool;
        assert!(is_tool_name(&t.name), "{file}: {}", t.name);
        assert!(names.insert(t.name.clone()), "{file}: duplicate {}", t.name);
        t.check().unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(t.description.chars().count() <= openapi::MAX_DESCRIPTION_CHARS, "{file}: {}", t.name);
        assert_eq!(t.approval, None, "{file}: the method decides");
        assert_eq!(t.method, op.method);
        let tool = HttpTool::new(t.clone()).unwrap_or_else(|e| panic!("{file}: {e}"));
        // The registry compiles and meta-validates every non-built-in schema.
        registry.register(Arc::new(tool)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let schema = t.parameters.as_ref().unwrap();
        jsonschema::meta::validate(schema).unwrap_or_else(|e| panic!("{file} {}: {e}", t.name));
    }
    assert_eq!(registry.len(), c.operations.len());
    c.operations.len()
}

#[test]
fn every_openapi_3_document_of_the_package_converts() {
    let root = examples();
    let mut files = 0;
    let mut operations = 0;
    let mut by_version = BTreeMap::new();
    let (mut same_twins, mut different_twins) = (0, Vec::new());
    for version in ["3.0", "3.1"] {
        for path in documents(&root.join(version)) {
            let file = path.strip_prefix(&root).unwrap().display().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let doc = openapi::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            let name = path.file_stem().unwrap().to_str().unwrap();
            let c = convert_all(&doc, name);
            let n = check_converted(&c, &file);
            if std::env::var("OPENAPI_NOTES").is_ok() {
                eprintln!("== {file}: {n} tools\n{}", c.notes.join("\n"));
            }
            // The YAML twin of a JSON document reads as the same document (the package's own
            // twins differ in a few places; those are counted out) and converts to the same tools.
            if file.contains("/yaml/") {
                let twin = path.to_str().unwrap().replace("/yaml/", "/json/").replace(".yaml", ".json");
                if let Ok(json_text) = std::fs::read_to_string(&twin) {
                    let json_doc = openapi::parse(&json_text).unwrap();
                    if json_doc == doc {
                        let j = convert_all(&json_doc, name);
                        assert_eq!(c, j, "{file} and its JSON twin convert differently");
                        same_twins += 1;
                    } else {
                        different_twins.push(file.clone());
                    }
                }
            }
            files += 1;
            operations += n;
            *by_version.entry(version).or_insert(0) += 1;
        }
    }
    // The package's 3.0 and 3.1 folders, JSON and YAML (counted so that a package update that
    // drops them is noticed).
    assert!(by_version["3.0"] >= 90 && by_version["3.1"] >= 20, "{by_version:?}");
    assert!(operations > 1000, "{files} files, {operations} operations");
    eprintln!(
        "{files} documents ({by_version:?}), {operations} operations; YAML = JSON twin: {same_twins}, twins that differ in the package: {different_twins:?}"
    );
    assert!(same_twins >= 45, "YAML documents read as their JSON twins: {same_twins}, differing: {different_twins:?}");
}

#[test]
fn swagger_2_documents_are_refused_with_a_clear_message() {
    let root = examples();
    let files = documents(&root.join("2.0"));
    assert!(files.len() >= 10);
    for path in files {
        let e = openapi::parse(&std::fs::read_to_string(&path).unwrap()).unwrap_err();
        assert_eq!(e, OpenApiError::Swagger2, "{}", path.display());
        assert!(e.to_string().starts_with("Swagger 2.0 documents are not supported; convert to OpenAPI 3"), "{e}");
    }
}

#[test]
fn petstore_becomes_the_expected_tools() {
    for file in ["3.0/json/petstore.json", "3.0/yaml/petstore.yaml", "3.1/json/petstore.json"] {
        let c = openapi::convert(&read(file), &options("petstore")).unwrap();
        assert_eq!(c.title, "Swagger Petstore", "{file}");
        assert_eq!(c.servers, ["http://petstore.swagger.io/v2"]);
        let names: Vec<&str> = c.operations.iter().map(|o| o.tool.name.as_str()).collect();
        for want in ["addPet", "updatePet", "findPetsByStatus", "getPetById", "deletePet", "placeOrder", "loginUser"] {
            assert!(names.contains(&want), "{file}: {names:?}");
        }
        // Form and multipart bodies: required ones are left out, optional ones dropped.
        assert!(
            !names.contains(&"uploadFile")
                || c.operations.iter().any(|o| o.tool.name == "uploadFile" && o.tool.body.is_none())
        );
        assert!(c.notes.iter().any(|n| n.contains("updatePetWithForm") && n.contains("JSON only")), "{:?}", c.notes);
        assert!(c.operations.iter().all(|o| o.selected), "20 operations: all selected");

        let op = |name: &str| c.operations.iter().find(|o| o.tool.name == name).unwrap();
        let get = op("getPetById");
        assert_eq!((get.method.as_str(), get.path.as_str()), ("GET", "/pet/{petId}"));
        assert_eq!(get.tool.url, "http://petstore.swagger.io/v2/pet/{{petId}}");
        assert_eq!(get.tool.headers.get("api_key").map(String::as_str), Some("{{secret:petstore-api_key}}"));
        assert_eq!(get.tool.parameters.as_ref().unwrap()["required"], json!(["petId"]));
        assert_eq!(get.tool.parameters.as_ref().unwrap()["properties"]["petId"]["type"], "integer");
        assert_eq!(get.tags, ["pet"]);
        assert_eq!(get.summary, "Find pet by ID");

        let login = op("loginUser");
        assert_eq!(login.tool.url, "http://petstore.swagger.io/v2/user/login");
        assert_eq!(login.tool.query.get("username").map(String::as_str), Some("{{username}}"));
        assert_eq!(login.tool.query.get("password").map(String::as_str), Some("{{password}}"));

        let by_status = op("findPetsByStatus");
        assert_eq!(by_status.tool.query["status"], "{{status}}");
        let status = &by_status.tool.parameters.as_ref().unwrap()["properties"]["status"];
        assert_eq!(status["type"], "string", "an array asked for as comma-separated text: {status}");

        // OAuth 2 is not supported: offered without a key, said once per operation.
        let add = op("addPet");
        assert_eq!(add.tool.method, "POST");
        assert!(add.tool.headers.is_empty(), "{:?}", add.tool.headers);
        assert!(c.notes.iter().any(|n| n.starts_with("POST /pet (addPet)") && n.contains("petstore_auth")));
        assert_eq!(add.tool.body, Some(json!("{{body}}")));
        let body = &add.tool.parameters.as_ref().unwrap()["properties"]["body"];
        assert_eq!(body["type"], "object");
        assert!(body["properties"]["name"].is_object() && body["properties"]["photoUrls"]["type"] == "array", "{body}");
        assert!(body.get("xml").is_none() && body["properties"]["category"].get("xml").is_none(), "{body}");
        // The delete's own `api_key` header parameter is a parameter (its scheme is OAuth 2).
        assert_eq!(op("deletePet").tool.headers.get("api_key").map(String::as_str), Some("{{api_key}}"));

        let api_key = c.security_schemes.iter().find(|s| s.name == "api_key").unwrap();
        assert_eq!(api_key.kind, SchemeKind::ApiKeyHeader("api_key".into()));
        assert!(api_key.supported);
        assert_eq!(api_key.secret.as_deref(), Some("petstore-api_key"));
        let oauth = c.security_schemes.iter().find(|s| s.name == "petstore_auth").unwrap();
        assert_eq!((oauth.kind.clone(), oauth.supported, oauth.secret.clone()), (SchemeKind::OAuth2, false, None));
    }
    // The person's own key name wins.
    let mut o = options("petstore");
    o.security.insert("api_key".into(), "my-pet-key".into());
    let c = openapi::convert(&read("3.0/json/petstore.json"), &o).unwrap();
    let get = c.operations.iter().find(|o| o.tool.name == "getPetById").unwrap();
    assert_eq!(get.tool.headers["api_key"], "{{secret:my-pet-key}}");
    assert_eq!(get.tool.secrets(), ["my-pet-key"]);
}

#[test]
fn security_schemes_of_the_real_security_document() {
    let c = openapi::convert(&read("3.0/json/security.json"), &options("sec")).unwrap();
    check_converted(&c, "security.json");
    let kinds: Vec<(&str, bool)> = c.security_schemes.iter().map(|s| (s.name.as_str(), s.supported)).collect();
    assert!(kinds.iter().any(|(_, s)| *s) && kinds.iter().any(|(_, s)| !*s), "{kinds:?}");
    let mut saw = BTreeSet::new();
    for op in &c.operations {
        for (k, v) in &op.tool.headers {
            if v.starts_with("Bearer {{secret:") {
                saw.insert("bearer");
            } else if v.starts_with("Basic {{secret:") {
                saw.insert("basic");
            } else if v.starts_with("{{secret:") {
                saw.insert("apiKey header");
                assert!(!k.eq_ignore_ascii_case("authorization") || v.contains("secret"));
            }
        }
        if op.tool.query.values().any(|v| v.starts_with("{{secret:")) {
            saw.insert("apiKey query");
        }
    }
    assert_eq!(saw, BTreeSet::from(["apiKey header", "apiKey query", "basic", "bearer"]), "{:#?}", c.operations);
    assert!(c.notes.iter().any(|n| n.contains("base64 of user:password")));
    assert!(c.notes.iter().any(|n| n.contains("is not supported") && n.contains("without authentication")));
}

#[test]
fn a_ref_cycle_becomes_an_open_schema_with_a_note() {
    let c = convert_all(&read("3.0/json/circular-request-bodies.json"), "circular");
    check_converted(&c, "circular-request-bodies.json");
    assert!(c.notes.iter().any(|n| n.contains("contains itself")), "{:#?}", c.notes);
    // The same holds for a cycle written here, through a parameter and a body.
    let doc = json!({
        "openapi": "3.1.0", "info": {"title": "Tree", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/nodes": {"post": {"operationId": "addNode", "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}},
        "components": {"schemas": {"Node": {"type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
        }}}}
    });
    let c = openapi::convert(&doc, &options("tree")).unwrap();
    check_converted(&c, "tree");
    assert_eq!(
        c.operations[0].tool.parameters.as_ref().unwrap()["properties"]["body"],
        json!({"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {}}}})
    );
    assert_eq!(
        c.notes,
        [
            "POST /nodes (addNode): the schema #/components/schemas/Node contains itself; where it recurs it accepts any value"
        ]
    );
}

#[test]
fn a_large_document_selects_nothing_by_default() {
    let doc = read("3.0/json/star-trek.json");
    let c = openapi::convert(&doc, &options("stapi")).unwrap();
    assert!(c.operations.len() > DEFAULT_SELECTED_MAX, "{}", c.operations.len());
    assert!(c.operations.iter().all(|o| !o.selected));
    let pick: BTreeSet<String> = c.operations.iter().take(3).map(|o| o.tool.name.clone()).collect();
    let o = OpenApiOptions { include: Some(pick.clone()), ..options("stapi") };
    let c = openapi::convert(&doc, &o).unwrap();
    let selected: BTreeSet<String> = c.operations.iter().filter(|o| o.selected).map(|o| o.tool.name.clone()).collect();
    assert_eq!(selected, pick);
    // At the limit, all are selected.
    let petstore = openapi::convert(&read("3.0/json/petstore.json"), &options("p")).unwrap();
    assert!(petstore.operations.len() <= DEFAULT_SELECTED_MAX && petstore.operations.iter().all(|o| o.selected));
}

#[test]
fn broken_documents_fail_with_a_clear_error() {
    let e = openapi::parse("{\"openapi\": \"3.0.0\",").unwrap_err();
    assert!(e.to_string().starts_with("The document is not valid JSON: "), "{e}");
    let e = openapi::parse("openapi: [3.0\n  info: : :\n- x").unwrap_err();
    assert!(e.to_string().starts_with("The document is not valid YAML: "), "{e}");
    assert_eq!(openapi::parse("just some text").unwrap_err(), OpenApiError::NotAnObject);
    let e = openapi::parse("info:\n  title: x\npaths: {}\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "The document is not an OpenAPI document: it has no 'openapi' field (as in \"openapi\": \"3.1.0\")."
    );
    assert_eq!(
        openapi::parse("{\"openapi\": \"4.0.0\"}").unwrap_err().to_string(),
        "OpenAPI 4.0.0 is not supported: use an OpenAPI 3.0 or 3.1 document."
    );
    let big = format!("{{\"openapi\": \"3.0.0\", \"x\": \"{}\"}}", "a".repeat(openapi::MAX_DOCUMENT_BYTES));
    assert!(matches!(openapi::parse(&big), Err(OpenApiError::TooLarge(_))));
    let paths: serde_json::Map<String, Value> =
        (0..2001).map(|i| (format!("/p{i}"), json!({"get": {"responses": {}}}))).collect();
    let many = json!({"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": paths});
    let e = openapi::convert(&many, &options("many")).unwrap_err();
    assert_eq!(e.to_string(), "The document has 2001 operations; at most 2000 are supported.");
}

/// A key store with the petstore key.
struct Keys;

impl Secrets for Keys {
    fn get(&self, name: &str) -> Result<Option<SecretValue>, String> {
        Ok((name == "petstore-api_key").then(|| SecretValue::new("pet-key-123")))
    }
}

/// `petstore.test` → 127.0.0.1.
struct MapResolver;

impl Resolver for MapResolver {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = (host == "petstore.test").then(|| vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        let host = host.to_owned();
        async move { found.ok_or_else(|| std::io::Error::other(format!("no test address for {host}"))) }.boxed()
    }
}

/// The real policy, except that 127.0.0.1 (the test server) counts as public.
struct TestServerIsPublic;

impl AddressPolicy for TestServerIsPublic {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if ip == IpAddr::V4(Ipv4Addr::LOCALHOST) { Ok(()) } else { StandardPolicy::default().check_ip(ip) }
    }
}

#[tokio::test]
async fn generated_petstore_tools_call_a_local_petstore() {
    // Two petstore operations: GET /pet/{petId} (needs the api_key header) and POST /pet.
    let pets: Arc<Mutex<HashMap<i64, Value>>> = Arc::new(Mutex::new(HashMap::new()));
    let (get_pets, add_pets) = (pets.clone(), pets.clone());
    let app = Router::new()
        .route(
            "/v2/pet/{pet_id}",
            get(move |UrlPath(pet_id): UrlPath<String>, headers: HeaderMap| async move {
                if headers.get("api_key").and_then(|v| v.to_str().ok()) != Some("pet-key-123") {
                    return (StatusCode::UNAUTHORIZED, Json(json!({"message": "bad key"})));
                }
                let Ok(id) = pet_id.parse::<i64>() else {
                    return (StatusCode::BAD_REQUEST, Json(json!({"message": "Invalid ID supplied"})));
                };
                match get_pets.lock().unwrap().get(&id) {
                    Some(pet) => (StatusCode::OK, Json(pet.clone())),
                    None => (StatusCode::NOT_FOUND, Json(json!({"message": "Pet not found"}))),
                }
            }),
        )
        .route(
            "/v2/pet",
            post(move |Json(pet): Json<Value>| async move {
                let id = pet["id"].as_i64().unwrap_or(1);
                add_pets.lock().unwrap().insert(id, pet.clone());
                (StatusCode::OK, Json(pet))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let o = OpenApiOptions { server: Some(format!("http://petstore.test:{port}/v2")), ..options("petstore") };
    let c = openapi::convert(&read("3.0/json/petstore.json"), &o).unwrap();
    let tool = |name: &str| {
        let config = c.operations.iter().find(|o| o.tool.name == name).unwrap().tool.clone();
        HttpTool::with_network(config, Arc::new(MapResolver), Arc::new(TestServerIsPublic)).unwrap()
    };
    let (add, get_by_id) = (tool("addPet"), tool("getPetById"));
    let ctx = || ToolContext::detached(Arc::new(Keys));

    let pet = json!({"id": 7, "name": "Rex", "photoUrls": ["https://example.com/rex.png"], "status": "available"});
    let out = add.call(json!({"body": pet}), ctx()).await.unwrap().text;
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), pet);
    let out = get_by_id.call(json!({"petId": 7}), ctx()).await.unwrap().text;
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["name"], "Rex");
    let e = get_by_id.call(json!({"petId": 8}), ctx()).await.unwrap_err().to_string();
    assert!(e.contains("404") && e.contains("Pet not found"), "{e}");
    // The preview shows the exact request with the key masked.
    let preview = get_by_id.preview(&json!({"petId": 7}), &Keys).unwrap();
    assert!(preview.contains("/v2/pet/7") && preview.contains("[secret petstore-api_key]"), "{preview}");
    assert!(!preview.contains("pet-key-123"));
}
