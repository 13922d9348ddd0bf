//! OpenAPI documents as tools: one HTTP tool per selected operation, from a copy of the
//! document kept in the config directory (`openapi/<name>.<ext>`) so the tools never depend on
//! the network to start. The entry in `tools.json` ([`OpenApiEntry`]) says which server, which
//! keys and which operations; turning it into tools is the defined tools' (`defined_tools`, below
//! this module), the conversion itself `switchboard_tools::openapi`. This module imports and
//! previews documents.
//!
//! The window names a document by an http(s) URL or by a file the person picked in the shell's
//! native dialog ([`OpenApiWindowRequest`], [`PickedFiles`]), never by a path: a path from the
//! page is never read. Only the CLI, whose paths the person typed, reads a path it is given.
//!
//! A document whose operations send keys is offered only once the person allowed those keys to
//! go to its server ([`crate::confirm::Widening::OpenApiKeys`], remembered as `openapi:<name>` in the trust
//! record); changing the server or the keys asks again.

use crate::confirm::Confirm;
pub use crate::defined_tools::OpenApiEntry;
use crate::defined_tools::{DefinedKind, DefinedToolInfo, build};
use crate::{Error, Result, Service};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use switchboard_core::ErrorKind;
use switchboard_tools::openapi::{self, Converted, MAX_DOCUMENT_BYTES, OpenApiOptions};

/// The folder, in the config directory, where imported documents are kept.
pub const OPENAPI_DIR: &str = "openapi";

/// What an import did, for the person.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiImport {
    /// The document as Settings lists it.
    pub document: DefinedToolInfo,
    /// Every operation: its tool name, method and path, and whether it is offered.
    pub operations: Vec<OpenApiOperation>,
    /// Its servers (the first absolute one is the default).
    pub servers: Vec<String>,
    /// What was not supported and left out.
    pub notes: Vec<String>,
}

/// One operation of an imported document.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiOperation {
    /// The tool's name.
    pub tool: String,
    /// `GET /pets/{petId}`.
    pub route: String,
    /// Its summary.
    pub summary: String,
    /// Whether it is offered.
    pub selected: bool,
    /// Why it is left out although chosen: a tool of another source (a built-in, a server, a
    /// document) holds its name, or the name is reserved. Such an operation is never `selected`.
    pub left_out: Option<String>,
}

/// A document read but not imported yet: what the person chooses from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiPreview {
    /// `info.title`.
    pub title: String,
    /// Its servers (the first absolute one is the default).
    pub servers: Vec<String>,
    /// Its security schemes and the key each would use.
    pub schemes: Vec<OpenApiScheme>,
    /// Every operation, selected as an import without a choice would select it.
    pub operations: Vec<OpenApiOperation>,
    /// What is not supported and would be left out.
    pub notes: Vec<String>,
}

/// A security scheme of a document.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiScheme {
    /// Its name in the document.
    pub name: String,
    /// What it is, in words ("API key in the header 'api_key'").
    pub kind: String,
    /// Whether its tools can send it.
    pub supported: bool,
    /// The key store entry it would use.
    pub key: Option<String>,
}

fn scheme_words(kind: &openapi::SchemeKind) -> String {
    use openapi::SchemeKind as K;
    match kind {
        K::ApiKeyHeader(h) => format!("API key in the header '{h}'"),
        K::ApiKeyQuery(q) => format!("API key in the query parameter '{q}'"),
        K::ApiKeyCookie(c) => format!("API key in the cookie '{c}' (not supported)"),
        K::HttpBearer => "bearer token".into(),
        K::HttpBasic => "HTTP basic (the key holds base64 of user:password)".into(),
        K::HttpOther(s) => format!("HTTP '{s}' (not supported)"),
        K::OAuth2 => "OAuth 2 (not supported)".into(),
        K::OpenIdConnect => "OpenID Connect (not supported)".into(),
        K::MutualTls => "mutual TLS (not supported)".into(),
        K::Other(s) => format!("'{s}' (not supported)"),
    }
}

impl Service {
    /// Every operation of `converted` (the document `document`), those whose name another
    /// source holds or reserves marked left out with the reason instead of selected.
    fn operations(&self, converted: &Converted, document: &str) -> Vec<OpenApiOperation> {
        let source = switchboard_core::ToolSource::OpenApi { document: document.to_owned() };
        converted
            .operations
            .iter()
            .map(|o| {
                let left_out = self.inner.tools.catalog.refusal(&o.tool.name, &source);
                OpenApiOperation {
                    tool: o.tool.name.clone(),
                    route: format!("{} {}", o.method, o.path),
                    summary: o.summary.clone(),
                    selected: o.selected && left_out.is_none(),
                    left_out,
                }
            })
            .collect()
    }
}

/// How a document is to be imported.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenApiRequest {
    /// The person's name for the API (letters, digits, '-', '_').
    pub name: String,
    /// A file path or an http(s) URL.
    pub source: String,
    /// The base URL to call instead of the document's.
    pub server: Option<String>,
    /// Security scheme -> key store entry.
    pub keys: BTreeMap<String, String>,
    /// Only these operations (tool names); `None`: the default selection.
    pub include: Option<BTreeSet<String>>,
    /// Let its tools (and the download) reach this computer and the local network.
    pub allow_local_addresses: bool,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 48 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Service {
    /// Reads and converts an OpenAPI document without keeping anything: its operations, servers,
    /// security schemes and notes, for the person to choose from before [`Service::import_openapi`].
    pub async fn preview_openapi(&self, request: &OpenApiRequest) -> Result<OpenApiPreview> {
        let text = self.read_openapi_source(&request.source, request.allow_local_addresses).await?;
        let doc = openapi::parse(&text).map_err(|e| Error::config(e.to_string()))?;
        let options = OpenApiOptions {
            document_name: request.name.clone(),
            server: request.server.clone(),
            security: request.keys.clone(),
            include: request.include.clone(),
        };
        let converted = openapi::convert(&doc, &options).map_err(|e| Error::config(e.to_string()))?;
        Ok(OpenApiPreview {
            title: converted.title.clone(),
            servers: converted.servers.clone(),
            schemes: converted
                .security_schemes
                .iter()
                .map(|s| OpenApiScheme {
                    name: s.name.clone(),
                    kind: scheme_words(&s.kind),
                    supported: s.supported,
                    key: s.secret.clone(),
                })
                .collect(),
            operations: self.operations(&converted, &request.name),
            notes: converted.notes,
        })
    }

    /// Reads an OpenAPI document (a file, or a URL the app fetches under the same address
    /// policy as `web_fetch`), keeps a copy, and offers its selected operations as tools. Keys
    /// its operations send are offered only once `confirm` agrees to their destination.
    pub async fn import_openapi(&self, request: OpenApiRequest, confirm: &dyn Confirm) -> Result<OpenApiImport> {
        if !valid_name(&request.name) {
            return Err(Error::config(format!(
                "'{}' cannot name an API: use letters, digits, '-' and '_' (at most 48).",
                request.name
            )));
        }
        let text = self.read_openapi_source(&request.source, request.allow_local_addresses).await?;
        let doc = openapi::parse(&text).map_err(|e| Error::config(e.to_string()))?;
        let ext = if text.trim_start().starts_with('{') { "json" } else { "yaml" };
        let mut entry = OpenApiEntry {
            name: request.name.clone(),
            file: format!("{OPENAPI_DIR}/{}.{ext}", request.name),
            source: Some(request.source.clone()),
            server: request.server,
            keys: request.keys,
            include: request.include,
            allow_local_addresses: request.allow_local_addresses,
        };
        let converted = openapi::convert(&doc, &entry.options()).map_err(|e| Error::config(e.to_string()))?;
        if let Some(unknown) = entry
            .include
            .as_ref()
            .and_then(|inc| inc.iter().find(|t| !converted.operations.iter().any(|o| &o.tool.name == *t)))
        {
            return Err(Error::config(format!("The document has no operation named '{unknown}'.")));
        }
        // Written down, so a later change of the document's default selection changes nothing.
        entry.include = Some(converted.operations.iter().filter(|o| o.selected).map(|o| o.tool.name.clone()).collect());

        let dir = self.config_dir()?;
        switchboard_mcp::config::write_private(&dir.join(&entry.file), &text)
            .map_err(|e| Error::config(format!("The document could not be kept: {e}")))?;
        let mut file = self.tools_file()?;
        file.open_api.retain(|d| d.name != entry.name);
        file.open_api.push(entry.clone());
        self.save_tools_file(&file)?;
        let built = build(&dir, &entry, crate::defined_tools::fingerprint);
        if let Some((change, fp)) = built.widening {
            self.allow_defined(vec![(change, fp)], &[format!("openapi:{}", entry.name)], confirm)?;
        }
        self.sync_defined_tools();
        let document = self
            .defined_tools()?
            .tools
            .into_iter()
            .find(|t| t.kind == DefinedKind::OpenApi && t.name == entry.name)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "The imported document is not listed."))?;
        Ok(OpenApiImport {
            document,
            operations: self.operations(&converted, &entry.name),
            servers: converted.servers,
            notes: converted.notes,
        })
    }

    /// The document's text, from a file or an http(s) URL, at most [`MAX_DOCUMENT_BYTES`].
    async fn read_openapi_source(&self, source: &str, allow_local: bool) -> Result<String> {
        let source = source.trim();
        if source.starts_with("http://") || source.starts_with("https://") {
            let config = switchboard_tools::WebToolsConfig {
                allow_local_addresses: allow_local,
                fetch_max_bytes: MAX_DOCUMENT_BYTES + 1,
                fetch_timeout: std::time::Duration::from_secs(30),
                ..Default::default()
            };
            let fetched = switchboard_tools::web::Fetcher::new(&config)
                .fetch(source)
                .await
                .map_err(|e| Error::config(format!("The document could not be downloaded: {e}")))?;
            if fetched.truncated || fetched.body.len() > MAX_DOCUMENT_BYTES {
                return Err(Error::config("The document is larger than 10 MB."));
            }
            return String::from_utf8(fetched.body).map_err(|_| Error::config("The document is not UTF-8 text."));
        }
        let path = Path::new(source);
        let size =
            std::fs::metadata(path).map_err(|e| Error::config(format!("{source} could not be read: {e}")))?.len();
        if size > MAX_DOCUMENT_BYTES as u64 {
            return Err(Error::config(format!("{source} is larger than 10 MB.")));
        }
        std::fs::read_to_string(path).map_err(|e| Error::config(format!("{source} could not be read: {e}")))
    }
}

/// Where the window says a document comes from. Never a path: script in the page can call every
/// command the window may call, so a local file is only ever one the person picked in the shell's
/// native file dialog, named by the pick the shell handed back ([`PickedFiles`]). The CLI, whose
/// paths the person typed, builds an [`OpenApiRequest`] itself.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum OpenApiSource {
    /// An http(s) URL the app downloads (under the same address policy as `web_fetch`).
    Url { url: String },
    /// The shell asks the person to choose a file in its native dialog, then reads that one.
    ChooseFile,
    /// A file the person chose earlier, by the pick the preview returned.
    Picked { pick: String },
}

/// How the window asks for a document to be previewed or imported: an [`OpenApiRequest`] whose
/// source is an [`OpenApiSource`], never a path.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiWindowRequest {
    /// The person's name for the API (letters, digits, '-', '_').
    pub name: String,
    /// Where the document comes from.
    pub source: OpenApiSource,
    /// The base URL to call instead of the document's.
    #[serde(default)]
    pub server: Option<String>,
    /// Security scheme -> key store entry.
    #[serde(default)]
    pub keys: BTreeMap<String, String>,
    /// Only these operations (tool names); `None`: the default selection.
    #[serde(default)]
    pub include: Option<BTreeSet<String>>,
    /// Let its tools (and the download) reach this computer and the local network.
    #[serde(default)]
    pub allow_local_addresses: bool,
}

/// A file the person chose in the shell's native dialog, as the window sees it: the pick that
/// names it in later calls and the file's name (never its path).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PickedFile {
    /// What the window sends back ([`OpenApiSource::Picked`]) to mean this file.
    pub pick: String,
    /// The file's name, for the person.
    pub name: String,
}

/// A preview for the window: the document's, and the file the person picked when it came from one.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiWindowPreview {
    /// What the document holds.
    pub preview: OpenApiPreview,
    /// The picked file it was read from (`None` for a URL).
    pub file: Option<PickedFile>,
}

/// How many picks are remembered; older ones are forgotten.
const PICKS_KEPT: usize = 8;

/// The files the person picked in the shell's native dialog, by pick. The shell keeps one for the
/// window; the window only ever holds picks.
///
/// Invariant: every path in here came from the native dialog, never from the page; a pick the
/// window sends that is not here is refused, never read as a path.
#[derive(Default)]
pub struct PickedFiles {
    picks: std::sync::Mutex<std::collections::VecDeque<(String, std::path::PathBuf)>>,
    next: std::sync::atomic::AtomicU64,
}

impl PickedFiles {
    /// Remembers `path`, which the person chose in the native dialog, and names it by a new pick.
    pub fn remember(&self, path: std::path::PathBuf) -> PickedFile {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let pick = format!("pick-{n}");
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let mut picks = self.picks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        picks.push_back((pick.clone(), path));
        while picks.len() > PICKS_KEPT {
            picks.pop_front();
        }
        PickedFile { pick, name }
    }

    /// The file the person picked as `pick`, with its name; a pick they did not make is refused.
    pub fn path(&self, pick: &str) -> Result<(std::path::PathBuf, PickedFile)> {
        let picks = self.picks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some((_, path)) = picks.iter().find(|(p, _)| p == pick) else {
            return Err(Error::config(format!("The file chosen as '{pick}' is no longer known: choose it again.")));
        };
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok((path.clone(), PickedFile { pick: pick.to_owned(), name }))
    }

    /// The request the service reads for the window's `request`, and the picked file it names.
    /// A URL must be http(s); a pick must be one the person made; [`OpenApiSource::ChooseFile`]
    /// is the shell's to answer first (with [`PickedFiles::remember`]).
    pub fn resolve(&self, request: OpenApiWindowRequest) -> Result<(OpenApiRequest, Option<PickedFile>)> {
        let (source, file) = match request.source {
            OpenApiSource::Url { url } => {
                let url = url.trim();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(Error::config(format!(
                        "'{url}' is not an http(s) URL: to import a file on this computer, choose it with \"Choose file…\"."
                    )));
                }
                (url.to_owned(), None)
            }
            OpenApiSource::Picked { pick } => {
                let picks = self.picks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let Some((_, path)) = picks.iter().find(|(p, _)| *p == pick) else {
                    return Err(Error::config(format!(
                        "The file chosen as '{pick}' is no longer known: choose it again with \"Choose file…\"."
                    )));
                };
                let name =
                    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
                (path.display().to_string(), Some(PickedFile { pick, name }))
            }
            OpenApiSource::ChooseFile => {
                return Err(Error::new(ErrorKind::Internal, "Choosing a file needs the app's file dialog."));
            }
        };
        let OpenApiWindowRequest { name, server, keys, include, allow_local_addresses, .. } = request;
        Ok((OpenApiRequest { name, source, server, keys, include, allow_local_addresses }, file))
    }
}

impl Service {
    /// [`Service::preview_openapi`] for the window: the source is a URL or a file the person picked.
    pub async fn preview_openapi_for_window(
        &self,
        picks: &PickedFiles,
        request: OpenApiWindowRequest,
    ) -> Result<OpenApiWindowPreview> {
        let (request, file) = picks.resolve(request)?;
        Ok(OpenApiWindowPreview { preview: self.preview_openapi(&request).await?, file })
    }
}
