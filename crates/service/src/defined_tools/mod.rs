//! Tools people define without code: HTTP API tools and command tools, from `tools.json` in the
//! config directory (next to `mcp.json`), each kind a tool source of the catalog.
//!
//! The file says what a tool does; the database says what the person allowed (`definedTools.trust`,
//! out of the page's reach, like `mcp.trust`). A command tool runs a program on this computer, and
//! an HTTP tool that carries a key sends it somewhere: either is offered to the model only once a
//! [`Confirm`] the page cannot answer agreed to it exactly as it is now (the command line and
//! whether it asks first; the keys and the one origin they go to). A definition edited in the file
//! afterwards waits in `needsApproval` again. A definition that makes no sense (a placeholder in
//! the host, an unknown parameter) is listed with its reason and never breaks the others.
//!
//! The file is read again when it changes (another process, an editor) before a turn takes its
//! tools, so a tool added from the CLI reaches a running desktop app at its next message.
//!
//! By concern: `file` is `tools.json` and what Settings lists; `document` turns an OpenAPI entry
//! into tools; this module keeps the three catalog sources, the trust record and the rebuild.
//! [`crate::openapi_docs`] (importing a document) sits above it and nothing here uses it.

mod document;
mod file;

pub(crate) use document::build;
pub(crate) use file::fingerprint;
pub use file::{
    CommandToolConfig, DefinedConfig, DefinedKind, DefinedState, DefinedToolInfo, DefinedToolsOverview, HttpToolConfig,
    OpenApiEntry, ToolsFile, TryResult,
};

use crate::confirm::{Confirm, Widening};
use crate::{Error, Result, Service};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use switchboard_core::{ApprovalPolicy, ErrorKind, Source, SourceStatus, Tool, ToolSource};
use switchboard_tools::command::CommandTool;
use switchboard_tools::http_tool::HttpTool;

/// The file's name in the config directory.
pub const TOOLS_FILE: &str = "tools.json";

/// The database key of what the person allowed: per tool name, the fingerprint of what they saw.
const TRUST: &str = "definedTools.trust";

/// The tools of one kind, as a catalog source (always ready: what is not allowed or not valid
/// is simply not among them).
struct DefinedSource {
    id: &'static str,
    tools: Mutex<Vec<Arc<dyn Tool>>>,
}

impl Source for DefinedSource {
    fn id(&self) -> &str {
        self.id
    }

    fn status(&self) -> SourceStatus {
        SourceStatus::Ready
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What the tools were built from: the file's modification time and length (none when it is
/// missing), and the trust record's text.
type Seen = (Option<(SystemTime, u64)>, String);

/// The defined-tools part of a service.
pub(crate) struct Defined {
    path: Option<PathBuf>,
    http: Arc<DefinedSource>,
    commands: Arc<DefinedSource>,
    documents: Arc<DefinedSource>,
    /// What the sources were built from: the file's modification time and length, and the
    /// trust record; nothing is rebuilt while these stay the same.
    seen: Mutex<Option<Seen>>,
    /// Why the file could not be used, if it could not.
    problem: Mutex<Option<String>>,
    /// Every definition of the file with its state, as of the last rebuild.
    infos: Mutex<Vec<DefinedToolInfo>>,
}

impl Defined {
    pub(crate) fn new(config_dir: Option<&Path>) -> Defined {
        Defined {
            path: config_dir.map(|d| d.join(TOOLS_FILE)),
            http: Arc::new(DefinedSource { id: "http", tools: Mutex::default() }),
            commands: Arc::new(DefinedSource { id: "command", tools: Mutex::default() }),
            documents: Arc::new(DefinedSource { id: "openapi", tools: Mutex::default() }),
            seen: Mutex::default(),
            problem: Mutex::default(),
            infos: Mutex::default(),
        }
    }
}

/// What a definition needs the person to allow, with its fingerprint; `None` when it needs
/// nothing (an HTTP tool without keys).
fn http_widening(config: &HttpToolConfig) -> Option<(Widening, String)> {
    let keys = config.secrets();
    if keys.is_empty() {
        return None;
    }
    let origin = config.origin().unwrap_or_else(|_| config.url.clone());
    let fingerprint = fingerprint(&format!("http\n{origin}\n{}", keys.join("\n")));
    Some((Widening::KeyToTool { tool: config.name.clone(), keys, origin }, fingerprint))
}

fn command_widening(config: &CommandToolConfig) -> (Widening, String) {
    let asks_first = config.asks_first();
    let fingerprint = fingerprint(&format!("command\n{}\n{asks_first}", config.fingerprint()));
    let change = Widening::CommandTool {
        tool: config.name.clone(),
        command_line: config.command_line_template(),
        asks_first,
        keys: config.secrets(),
    };
    (change, fingerprint)
}

/// Replaces the item named like `item` in `list`, or adds it at the end.
fn upsert<T>(list: &mut Vec<T>, item: T, name: impl Fn(&T) -> &String) {
    match list.iter_mut().find(|t| name(t) == name(&item)) {
        Some(existing) => *existing = item,
        None => list.push(item),
    }
}

fn trust(store: &switchboard_store::Store) -> Result<BTreeMap<String, String>> {
    Ok(store.setting(TRUST)?.unwrap_or_default())
}

/// One tool built from its definition, or why it is not offered.
struct Built {
    info: DefinedToolInfo,
    tool: Option<Arc<dyn Tool>>,
}

impl Service {
    fn tools_path(&self) -> Result<&Path> {
        self.inner
            .defined
            .path
            .as_deref()
            .ok_or_else(|| Error::config("This session has no config directory for tools."))
    }

    /// The config directory the tools file and the kept OpenAPI documents live in.
    pub(crate) fn config_dir(&self) -> Result<PathBuf> {
        Ok(self.tools_path()?.parent().map(Path::to_owned).unwrap_or_default())
    }

    pub(crate) fn tools_file(&self) -> Result<ToolsFile> {
        let Some(path) = self.inner.defined.path.as_deref() else { return Ok(ToolsFile::default()) };
        ToolsFile::load(path).map_err(Error::config)
    }

    pub(crate) fn save_tools_file(&self, file: &ToolsFile) -> Result<()> {
        file.save(self.tools_path()?).map_err(Error::config)
    }

    /// Adds the three sources to the catalog, empty. Called once, at start-up; the file (and
    /// the OpenAPI documents it keeps, up to 10 MB each) is read when tools are first needed.
    pub(crate) fn load_defined_tools(&self) {
        let d = &self.inner.defined;
        for source in [d.http.clone() as Arc<dyn Source>, d.commands.clone(), d.documents.clone()] {
            if let Err(e) = self.inner.tools.catalog.add(source) {
                tracing::warn!("{e}");
            }
        }
    }

    /// Reads the file and the trust record again when either changed, and rebuilds the tools.
    pub(crate) fn sync_defined_tools(&self) {
        let d = &self.inner.defined;
        let stamp =
            d.path.as_deref().and_then(|p| std::fs::metadata(p).ok()).and_then(|m| Some((m.modified().ok()?, m.len())));
        // An unreadable record allows nothing.
        let record = self.inner.store.setting::<serde_json::Value>(TRUST).ok().flatten();
        let trust_text = record.as_ref().map(|v| v.to_string()).unwrap_or_default();
        let now = Some((stamp, trust_text));
        {
            let mut seen = d.seen.lock().unwrap_or_else(|p| p.into_inner());
            if *seen == now {
                return;
            }
            *seen = now;
        }
        let file = match self.tools_file() {
            Ok(file) => {
                *d.problem.lock().unwrap_or_else(|p| p.into_inner()) = None;
                file
            }
            Err(e) => {
                tracing::warn!("tools file not used: {}", e.message);
                *d.problem.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.message);
                return;
            }
        };
        let trusted: BTreeMap<String, String> = record.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
        let built = self.build_defined(&file, &trusted);
        let mut infos = Vec::with_capacity(built.len());
        let (mut http, mut commands, mut documents) = (Vec::new(), Vec::new(), Vec::new());
        for b in built {
            match (&b.info.kind, b.tool) {
                (DefinedKind::Http, Some(tool)) => http.push(tool),
                (_, Some(tool)) => commands.push(tool),
                (_, None) => {}
            }
            infos.push(b.info);
        }
        for b in self.build_documents(&file) {
            let mut info = b.info;
            match b.widening {
                Some((change, fp)) if trusted.get(&format!("openapi:{}", info.name)) != Some(&fp) => {
                    if info.state == DefinedState::Ready {
                        info.state = DefinedState::NeedsApproval { reason: change.describe() };
                    }
                }
                _ => documents.extend(b.tools),
            }
            infos.push(info);
        }
        *d.http.tools.lock().unwrap_or_else(|p| p.into_inner()) = http;
        *d.commands.tools.lock().unwrap_or_else(|p| p.into_inner()) = commands;
        *d.documents.tools.lock().unwrap_or_else(|p| p.into_inner()) = documents;
        *d.infos.lock().unwrap_or_else(|p| p.into_inner()) = infos;
        self.inner.tools.catalog.rebuild();
    }

    /// Marks what the catalog refused for its name (a built-in's, or one another source also
    /// offers): a tool is not usable, with the reason; a document says which operations are left
    /// out. Read when listed, as the other sources may have changed since the file was read.
    fn mark_refused(&self, infos: &mut [DefinedToolInfo]) {
        let catalog = &self.inner.tools.catalog;
        let documents = self.inner.defined.documents.tools.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for info in infos.iter_mut().filter(|i| i.state == DefinedState::Ready) {
            let source = match info.kind {
                DefinedKind::Http => ToolSource::Http,
                DefinedKind::Command => ToolSource::Command,
                DefinedKind::OpenApi => {
                    let source = ToolSource::OpenApi { document: info.name.clone() };
                    let refused: Vec<String> = documents
                        .iter()
                        .filter(|t| t.def().source == source)
                        .filter_map(|t| catalog.refusal(&t.def().name, &source))
                        .collect();
                    if !refused.is_empty() {
                        info.description.push_str(&format!(
                            "; {} of them left out, not offered, because another source has the name: {}",
                            refused.len(),
                            refused.join("; ")
                        ));
                    }
                    continue;
                }
            };
            if let Some(reason) = catalog.refusal(&info.name, &source) {
                info.state = DefinedState::Invalid { reason };
            }
        }
    }

    /// Builds every HTTP and command tool of `file`, each with its state.
    fn build_defined(&self, file: &ToolsFile, trusted: &BTreeMap<String, String>) -> Vec<Built> {
        let allowed = |name: &str, fingerprint: &str| trusted.get(name).is_some_and(|f| f == fingerprint);
        let mut names: Vec<String> = Vec::new();
        // Why a definition is not offered, or the tool; `widening` is what it needs allowed.
        let mut settle =
            |name: &str, made: std::result::Result<Arc<dyn Tool>, String>, widening: Option<(Widening, String)>| {
                let duplicate = names.iter().any(|n| n == name);
                names.push(name.to_owned());
                if duplicate {
                    let reason = format!("Another tool in the file is also named '{name}'; rename one of them.");
                    return (DefinedState::Invalid { reason }, None);
                }
                match (made, widening) {
                    (Err(reason), _) => (DefinedState::Invalid { reason }, None),
                    (Ok(_), Some((change, fp))) if !allowed(name, &fp) => {
                        (DefinedState::NeedsApproval { reason: change.describe() }, None)
                    }
                    (Ok(tool), _) => (DefinedState::Ready, Some(tool)),
                }
            };
        let mut out = Vec::new();
        for config in &file.http_tools {
            let made = HttpTool::new(config.clone()).map(|t| Arc::new(t) as Arc<dyn Tool>).map_err(|e| e.to_string());
            let (state, tool) = settle(&config.name, made, http_widening(config));
            let info = DefinedToolInfo {
                name: config.name.clone(),
                kind: DefinedKind::Http,
                description: config.description.clone(),
                target: format!("{} {}", config.method_upper(), config.url),
                keys: config.secrets(),
                asks_first: config.effective_approval() == ApprovalPolicy::Ask,
                state,
            };
            out.push(Built { info, tool });
        }
        for config in &file.command_tools {
            let made =
                CommandTool::new(config.clone()).map(|t| Arc::new(t) as Arc<dyn Tool>).map_err(|e| e.to_string());
            let (state, tool) = settle(&config.name, made, Some(command_widening(config)));
            let info = DefinedToolInfo {
                name: config.name.clone(),
                kind: DefinedKind::Command,
                description: config.description.clone(),
                target: config.command_line_template(),
                keys: config.secrets(),
                asks_first: config.asks_first(),
                state,
            };
            out.push(Built { info, tool });
        }
        out
    }

    /// Every defined tool with its state, and the file's problem if it has one.
    pub fn defined_tools(&self) -> Result<DefinedToolsOverview> {
        self.sync_defined_tools();
        let d = &self.inner.defined;
        let problem = d.problem.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut tools =
            if problem.is_some() { Vec::new() } else { d.infos.lock().unwrap_or_else(|p| p.into_inner()).clone() };
        self.mark_refused(&mut tools);
        Ok(DefinedToolsOverview { config_path: d.path.as_ref().map(|p| p.display().to_string()), problem, tools })
    }

    /// One defined tool's whole definition as the file holds it, for editing it.
    pub fn defined_tool_config(&self, name: &str) -> Result<DefinedConfig> {
        let file = self.tools_file()?;
        if let Some(c) = file.http_tools.iter().find(|t| t.name == name) {
            return Ok(DefinedConfig::Http(c.clone()));
        }
        if let Some(c) = file.command_tools.iter().find(|t| t.name == name) {
            return Ok(DefinedConfig::Command(c.clone()));
        }
        Err(Error::new(ErrorKind::NotFound, format!("There is no tool named '{name}' in the tools file.")))
    }

    fn defined_info(&self, name: &str) -> Result<DefinedToolInfo> {
        self.defined_tools()?.tools.into_iter().find(|t| t.name == name).ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("There is no tool named '{name}' in the tools file."))
        })
    }

    /// A name no other source's tool has (a defined tool of the same kind may be replaced).
    fn check_free_name(&self, name: &str, file: &ToolsFile, kind: DefinedKind) -> Result<()> {
        let other_kind = match kind {
            DefinedKind::Http => file.command_tools.iter().any(|t| t.name == name),
            DefinedKind::Command => file.http_tools.iter().any(|t| t.name == name),
            DefinedKind::OpenApi => false,
        };
        let ours = |source: &switchboard_core::ToolSource| {
            matches!(source, switchboard_core::ToolSource::Http | switchboard_core::ToolSource::Command)
        };
        let elsewhere = self.inner.tools.catalog.registry().get(name).is_some_and(|t| !ours(&t.def().source));
        if other_kind || elsewhere {
            return Err(Error::config(format!("A tool named '{name}' already exists; choose another name.")));
        }
        Ok(())
    }

    /// Asks `confirm` about `changes` (if any) and records their fingerprints when it agrees.
    /// `false` when the person said no: the definitions are saved and wait for approval.
    pub(crate) fn allow_defined(
        &self,
        changes: Vec<(Widening, String)>,
        names: &[String],
        confirm: &dyn Confirm,
    ) -> Result<bool> {
        if changes.is_empty() {
            return Ok(true);
        }
        let widenings: Vec<Widening> = changes.iter().map(|(w, _)| w.clone()).collect();
        if !confirm.confirm(&widenings) {
            return Ok(false);
        }
        let mut all = trust(&self.inner.store)?;
        for (name, (_, fp)) in names.iter().zip(changes) {
            all.insert(name.clone(), fp);
        }
        self.inner.store.set_setting(TRUST, &all)?;
        Ok(true)
    }

    /// Adds (or replaces) an HTTP API tool. One that sends a key is offered only when `confirm`
    /// agrees to the key going to its origin; otherwise it is saved and waits for approval.
    pub fn add_http_tool(&self, config: HttpToolConfig, confirm: &dyn Confirm) -> Result<DefinedToolInfo> {
        HttpTool::new(config.clone()).map_err(|e| Error::config(e.to_string()))?;
        let change = http_widening(&config);
        self.put_defined(&config.name.clone(), DefinedKind::Http, change, confirm, |file| {
            upsert(&mut file.http_tools, config, |t| &t.name)
        })
    }

    /// Adds (or replaces) a command tool. It is offered only when `confirm` agrees to the exact
    /// command line (and, when it would run without asking, to that); otherwise it is saved and
    /// waits for approval.
    pub fn add_command_tool(&self, config: CommandToolConfig, confirm: &dyn Confirm) -> Result<DefinedToolInfo> {
        CommandTool::new(config.clone()).map_err(|e| Error::config(e.to_string()))?;
        let change = Some(command_widening(&config));
        self.put_defined(&config.name.clone(), DefinedKind::Command, change, confirm, |file| {
            upsert(&mut file.command_tools, config, |t| &t.name)
        })
    }

    /// Saves a checked definition with `put`, asks about `change`, and rebuilds the tools.
    fn put_defined(
        &self,
        name: &str,
        kind: DefinedKind,
        change: Option<(Widening, String)>,
        confirm: &dyn Confirm,
        put: impl FnOnce(&mut ToolsFile),
    ) -> Result<DefinedToolInfo> {
        let mut file = self.tools_file()?;
        self.check_free_name(name, &file, kind)?;
        put(&mut file);
        self.save_tools_file(&file)?;
        self.allow_defined(change.into_iter().collect(), &[name.to_owned()], confirm)?;
        self.sync_defined_tools();
        self.defined_info(name)
    }

    /// Allows a tool that waits for approval (new in the file, or changed since it was allowed).
    pub fn approve_defined_tool(&self, name: &str, confirm: &dyn Confirm) -> Result<DefinedToolInfo> {
        let file = self.tools_file()?;
        let change = if let Some(c) = file.http_tools.iter().find(|t| t.name == name) {
            http_widening(c)
        } else if let Some(c) = file.command_tools.iter().find(|t| t.name == name) {
            Some(command_widening(c))
        } else if file.open_api.iter().any(|d| d.name == name) {
            let built = self.build_documents(&file).into_iter().find(|b| b.info.name == name);
            let change = built.and_then(|b| b.widening);
            if !self.allow_defined(change.into_iter().collect(), &[format!("openapi:{name}")], confirm)? {
                return Err(Error::new(ErrorKind::Cancelled, format!("'{name}' was not allowed; it stays off.")));
            }
            self.sync_defined_tools();
            return self.defined_info(name);
        } else {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no tool named '{name}' in the tools file.")));
        };
        if !self.allow_defined(change.into_iter().collect(), &[name.to_owned()], confirm)? {
            return Err(Error::new(ErrorKind::Cancelled, format!("'{name}' was not allowed; it stays off.")));
        }
        self.sync_defined_tools();
        self.defined_info(name)
    }

    /// Removes a defined tool (its keys stay in the key store).
    pub fn remove_defined_tool(&self, name: &str) -> Result<()> {
        let mut file = self.tools_file()?;
        let before = file.names().len();
        file.http_tools.retain(|t| t.name != name);
        file.command_tools.retain(|t| t.name != name);
        let document = file.open_api.iter().position(|d| d.name == name).map(|i| file.open_api.remove(i));
        if file.names().len() == before && document.is_none() {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no tool named '{name}' in the tools file.")));
        }
        self.save_tools_file(&file)?;
        let mut all = trust(&self.inner.store)?;
        let trusted_document = all.remove(&format!("openapi:{name}")).is_some();
        if all.remove(name).is_some() || trusted_document {
            self.inner.store.set_setting(TRUST, &all)?;
        }
        if let Some(doc) = document
            && let Ok(dir) = self.config_dir()
        {
            // The kept copy; a missing one is already gone.
            let _ = std::fs::remove_file(dir.join(&doc.file));
        }
        self.sync_defined_tools();
        Ok(())
    }

    /// Adds every tool of another tools file (same shape), replacing those with the same name;
    /// what needs the person's approval is asked about together. Returns the tools it added.
    pub fn import_defined_tools(&self, path: &Path, confirm: &dyn Confirm) -> Result<Vec<DefinedToolInfo>> {
        let imported = match std::fs::read_to_string(path) {
            Ok(text) => ToolsFile::parse(&text)
                .map_err(|e| Error::config(format!("{} is not a valid tools file: {e}", path.display())))?,
            Err(e) => return Err(Error::config(format!("{} could not be read: {e}", path.display()))),
        };
        for c in &imported.http_tools {
            HttpTool::new(c.clone()).map_err(|e| Error::config(e.to_string()))?;
        }
        for c in &imported.command_tools {
            CommandTool::new(c.clone()).map_err(|e| Error::config(e.to_string()))?;
        }
        let added: Vec<String> = imported.names().into_iter().map(str::to_owned).collect();
        let mut file = self.tools_file()?;
        let mut changes = Vec::new();
        let mut names = Vec::new();
        for c in imported.http_tools {
            self.check_free_name(&c.name, &file, DefinedKind::Http)?;
            if let Some(change) = http_widening(&c) {
                names.push(c.name.clone());
                changes.push(change);
            }
            upsert(&mut file.http_tools, c, |t| &t.name);
        }
        for c in imported.command_tools {
            self.check_free_name(&c.name, &file, DefinedKind::Command)?;
            names.push(c.name.clone());
            changes.push(command_widening(&c));
            upsert(&mut file.command_tools, c, |t| &t.name);
        }
        self.save_tools_file(&file)?;
        self.allow_defined(changes, &names, confirm)?;
        Ok(self.defined_tools()?.tools.into_iter().filter(|t| added.contains(&t.name)).collect())
    }

    /// Runs an HTTP tool of the file once with `args`, outside any chat (the editor's "try it",
    /// `switchboard tools try`): the exact request it sent (keys masked) and what came back.
    /// Trying is the person's own act, so it needs no approval; it still refuses what the tool's
    /// policy refuses (local addresses, keys to another origin).
    pub async fn try_http_tool(
        &self,
        name: &str,
        args: serde_json::Value,
    ) -> Result<switchboard_tools::http_tool::TryReport> {
        let file = self.tools_file()?;
        let config = file
            .http_tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("There is no HTTP tool named '{name}'.")))?;
        let tool = HttpTool::new(config).map_err(|e| Error::config(e.to_string()))?;
        let secrets: Arc<dyn switchboard_core::Secrets> = Arc::new(switchboard_secrets::ToolSecrets(self.keys()));
        Ok(tool.try_it(args, secrets).await)
    }
}
