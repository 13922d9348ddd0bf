//! MCP servers: the config file, the person's approvals, and each server as a tool source.
//!
//! The config is Claude Desktop's `mcpServers` JSON in the app's config directory
//! ([`switchboard_mcp::config::CONFIG_FILE`]). What the person approved lives in the database
//! (`mcp.trust`), out of the page's reach: per server, the fingerprint of the command line they
//! allowed to run and the fingerprints of its tools' definitions. A stdio server whose command
//! is not approved as it is now (new, edited here, or edited in the file while the app was
//! closed) waits in `needsApproval` and runs only after a [`Confirm`] the page cannot answer.

mod context;
mod edit;
mod roots;

pub use context::*;
pub use edit::{McpEdited, edited_notice};
pub use roots::MAX_ROOTS;

use crate::confirm::{Confirm, Widening};
use crate::{Error, Inner, Result, Service};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use switchboard_core::tool::SecretValue;
use switchboard_core::{ErrorKind, Secrets, Source, SourceStatus, ToolSource};
use switchboard_mcp::config::{CONFIG_FILE, check_name};
use switchboard_mcp::{Approvals, McpConfig, McpServer, Options, TokenVault};
pub use switchboard_mcp::{Browser, HeldTool, OfferedTool, ServerConfig, ServerDetail};

/// The database key of what the person approved.
const TRUST: &str = "mcp.trust";

/// What the person approved of one server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Trust {
    /// The fingerprint of the command line they allowed to run.
    #[serde(default)]
    command: Option<String>,
    /// The fingerprints of the tool definitions they approved, by the server's tool name.
    #[serde(default)]
    tools: BTreeMap<String, String>,
    /// Whether its tools were approved (even none): a tool it lists later without an approved
    /// fingerprint was added since, and is held until the person approves it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    tools_seen: bool,
}

/// The MCP part of a service.
#[derive(Default)]
pub(crate) struct Mcp {
    /// The config file (none for an in-memory service).
    path: Option<PathBuf>,
    /// The running (or waiting) servers, by name.
    servers: Mutex<BTreeMap<String, Arc<McpServer>>>,
    /// Why the config file could not be read, if it could not.
    problem: Mutex<Option<String>>,
}

impl Mcp {
    pub(crate) fn new(config_dir: Option<&Path>) -> Mcp {
        Mcp { path: config_dir.map(|d| d.join(CONFIG_FILE)), ..Mcp::default() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<McpServer>>> {
        self.servers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One server as Settings and `switchboard mcp list` show it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    /// Its entry in the config file.
    pub config: ServerConfig,
    /// Whether it is enabled (not `disabled` in the file).
    pub enabled: bool,
    /// Its state: status, tools, held-back tools, stderr.
    pub detail: ServerDetail,
}

/// Every server, and the config file they come from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpOverview {
    /// The config file's path.
    pub config_path: Option<String>,
    /// Why the file could not be used, in words; the servers are then the last good ones.
    pub problem: Option<String>,
    /// The servers in name order.
    pub servers: Vec<McpServerInfo>,
}

/// A server another app's config would add.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedServer {
    /// Its name here.
    pub name: String,
    /// The command line or URL.
    pub target: String,
    /// Values that go to the keychain instead of the file (`env GITHUB_TOKEN`).
    pub secrets: Vec<String>,
    /// A server of that name exists already; it is left as it is.
    pub exists: bool,
}

/// What importing a file would do (or did).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportPreview {
    /// The file.
    pub path: String,
    /// The servers in it.
    pub servers: Vec<ImportedServer>,
    /// Fields and entries left behind, and renames.
    pub notes: Vec<String>,
}

/// Another app's config file Switchboard knows where to find.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSource {
    /// `claude` or `cursor`.
    pub app: String,
    /// The file.
    pub path: String,
}

/// The person's keys, read when a server starts (the key store can change while the app runs).
struct LiveKeys(Weak<Inner>);

impl Secrets for LiveKeys {
    fn get(&self, name: &str) -> std::result::Result<Option<SecretValue>, String> {
        let Some(inner) = self.0.upgrade() else { return Ok(None) };
        let keys = Arc::clone(&inner.keys.read().unwrap_or_else(|p| p.into_inner()).store);
        let value = keys.get(name).map_err(|e| e.to_string())?;
        if let Some(v) = &value {
            // A server may echo its environment back (a debugging tool): mask it in results.
            crate::redact::remember(v);
        }
        Ok(value)
    }
}

/// Sign-in tokens of remote servers, in the key store (one entry per server, JSON).
struct KeyVault(Weak<Inner>);

impl KeyVault {
    fn keys(&self) -> Option<Arc<dyn switchboard_secrets::SecretStore>> {
        let inner = self.0.upgrade()?;
        Some(Arc::clone(&inner.keys.read().unwrap_or_else(|p| p.into_inner()).store))
    }
}

impl TokenVault for KeyVault {
    fn load(&self, key: &str) -> Option<String> {
        let value = self.keys()?.get(key).ok().flatten()?;
        Some(value.expose().to_owned())
    }

    fn save(&self, key: &str, value: &str) -> std::result::Result<(), String> {
        let keys = self.keys().ok_or("the app is closing")?;
        keys.set(key, &SecretValue::new(value)).map_err(|e| format!("the sign-in could not be kept: {e}"))
    }

    fn clear(&self, key: &str) {
        if let Some(keys) = self.keys()
            && let Err(e) = keys.delete(key)
        {
            tracing::warn!("a sign-in could not be forgotten: {e}");
        }
    }
}

/// The approvals in the database.
struct StoredApprovals(Weak<Inner>);

impl StoredApprovals {
    fn with<T>(&self, f: impl FnOnce(&switchboard_store::Store) -> T) -> Option<T> {
        self.0.upgrade().map(|inner| f(&inner.store))
    }
}

impl Approvals for StoredApprovals {
    fn approved_tools(&self, server: &str) -> std::result::Result<BTreeMap<String, String>, String> {
        let all = self.with(trust).ok_or("the app is closing")?.map_err(|e| e.message)?;
        Ok(all.get(server).map(|t| t.tools.clone()).unwrap_or_default())
    }

    fn record_tools(&self, server: &str, fingerprints: &BTreeMap<String, String>) -> std::result::Result<(), String> {
        self.with(|store| {
            update_trust(store, |all| {
                let trust = all.entry(server.to_owned()).or_default();
                trust.tools.clone_from(fingerprints);
                trust.tools_seen = true;
            })
        })
        .ok_or("the app is closing")?
        .map_err(|e| e.message)
    }

    fn tools_approved_before(&self, server: &str) -> std::result::Result<bool, String> {
        let all = self.with(trust).ok_or("the app is closing")?.map_err(|e| e.message)?;
        Ok(all.get(server).is_some_and(|t| t.tools_seen || !t.tools.is_empty()))
    }
}

/// What the person approved, read; an unreadable record is an error, never "nothing approved".
fn trust(store: &switchboard_store::Store) -> Result<BTreeMap<String, Trust>> {
    Ok(store.setting(TRUST)?.unwrap_or_default())
}

/// Changes the approvals record: read, change and write one at a time in this process (every
/// server records its tools as it starts, together).
fn update_trust(store: &switchboard_store::Store, change: impl FnOnce(&mut BTreeMap<String, Trust>)) -> Result<()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut all = trust(store)?;
    change(&mut all);
    Ok(store.set_setting(TRUST, &all)?)
}

/// What importing `imported` (read from `path`) into `existing` adds, keeps and moves to the keychain.
fn import_preview(path: &Path, imported: &McpConfig, notes: Vec<String>, existing: &McpConfig) -> ImportPreview {
    let servers = imported
        .mcp_servers
        .iter()
        .map(|(name, config)| {
            let mut config = config.clone();
            let secrets = config.extract_secrets(name).into_iter().map(|s| s.location).collect();
            let target = config.command_line().or_else(|| config.url.clone()).unwrap_or_default();
            ImportedServer { exists: existing.mcp_servers.contains_key(name), name: name.clone(), target, secrets }
        })
        .collect();
    ImportPreview { path: path.display().to_string(), servers, notes }
}

/// Where Claude Desktop and Cursor keep their MCP configs on this system.
fn import_sources() -> Vec<ImportSource> {
    let mut out = Vec::new();
    let base = directories::BaseDirs::new();
    if let Some(base) = &base {
        let claude = if cfg!(target_os = "macos") {
            base.home_dir().join("Library/Application Support/Claude/claude_desktop_config.json")
        } else {
            base.config_dir().join("Claude/claude_desktop_config.json")
        };
        out.push(ImportSource { app: "claude".into(), path: claude.display().to_string() });
        out.push(ImportSource {
            app: "cursor".into(),
            path: base.home_dir().join(".cursor/mcp.json").display().to_string(),
        });
    }
    out
}

impl Service {
    fn mcp_path(&self) -> Result<&Path> {
        self.inner
            .mcp
            .path
            .as_deref()
            .ok_or_else(|| Error::config("This session has no config directory for MCP servers."))
    }

    pub(crate) fn mcp_config(&self) -> Result<McpConfig> {
        let Some(path) = self.inner.mcp.path.as_deref() else { return Ok(McpConfig::default()) };
        McpConfig::load(path).map_err(|e| Error::config(e.to_string()))
    }

    fn save_mcp_config(&self, config: &McpConfig) -> Result<()> {
        config.save(self.mcp_path()?).map_err(|e| Error::config(e.to_string()))?;
        *self.inner.mcp.problem.lock().unwrap_or_else(|p| p.into_inner()) = None;
        Ok(())
    }

    /// Options for a server: the tool timeout comes from the entry, the working directory
    /// defaults to the config directory.
    fn mcp_options(&self) -> Options {
        Options {
            default_cwd: self.mcp_path().ok().and_then(Path::parent).map(Path::to_owned),
            tokens: Some(Arc::new(KeyVault(Arc::downgrade(&self.inner)))),
            // Input, completions and roots are answered through each call's chat.
            asks: true,
            ..Options::default()
        }
    }

    /// Whether `config` may run without asking: a remote server, or a command line the person
    /// approved exactly as it is.
    fn mcp_approved(&self, name: &str, config: &ServerConfig) -> bool {
        match config.command_fingerprint() {
            None => true,
            // An unreadable record approves nothing.
            Some(fp) => trust(&self.inner.store)
                .is_ok_and(|all| all.get(name).and_then(|t| t.command.as_deref()) == Some(fp.as_str())),
        }
    }

    fn record_command(&self, name: &str, config: &ServerConfig) -> Result<()> {
        update_trust(&self.inner.store, |all| {
            all.entry(name.to_owned()).or_default().command = config.command_fingerprint()
        })
    }

    /// Reads the config file and adds a tool source per enabled server (not started: shells
    /// start every source in the background). A file that cannot be read is reported in
    /// [`Service::mcp_servers`] and adds nothing.
    pub(crate) fn load_mcp(&self) {
        let config = match self.mcp_config() {
            Ok(config) => config,
            Err(e) => {
                tracing::warn!("MCP config not used: {e}");
                *self.inner.mcp.problem.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.message);
                return;
            }
        };
        for (name, entry) in config.mcp_servers {
            if entry.disabled {
                continue;
            }
            if let Err(e) = entry.spec(&name) {
                tracing::warn!("{e}");
            }
            self.add_mcp_source(&name, entry);
        }
    }

    fn add_mcp_source(&self, name: &str, config: ServerConfig) -> Arc<McpServer> {
        let approved = self.mcp_approved(name, &config);
        let roots = self.mcp_roots_of(&config);
        let weak = Arc::downgrade(&self.inner);
        let server = Arc::new(McpServer::new(
            name,
            config,
            self.mcp_options(),
            Arc::new(LiveKeys(weak.clone())),
            Arc::new(StoredApprovals(weak)),
            approved,
        ));
        server.set_roots(roots);
        if let Err(e) = self.inner.tools.catalog.add(server.clone()) {
            tracing::warn!("{e}");
        }
        self.inner.mcp.lock().insert(name.to_owned(), Arc::clone(&server));
        server
    }

    async fn remove_mcp_source(&self, name: &str) {
        let removed = self.inner.mcp.lock().remove(name);
        self.inner.tools.catalog.remove(&format!("mcp:{name}"));
        if let Some(server) = removed {
            server.stop().await;
        }
    }

    fn mcp_server(&self, name: &str) -> Result<Arc<McpServer>> {
        self.inner.mcp.lock().get(name).cloned().ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("There is no running MCP server named '{name}' (is it disabled?)."))
        })
    }

    /// Every configured server with its state, and the config file's problem if it has one.
    pub fn mcp_servers(&self) -> Result<McpOverview> {
        let config = self.mcp_config();
        let problem = match &config {
            Err(e) => Some(e.message.clone()),
            Ok(_) => self.inner.mcp.problem.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        };
        let running = self.inner.mcp.lock().clone();
        // What the registry refused (a schema that is not JSON Schema, a name another source
        // also offers) is reported against the server, and only what it offers is listed as
        // offered: composed with every source, the defined tools' included.
        self.sync_defined_tools();
        let states = self.inner.tools.catalog.states();
        let registry = self.inner.tools.catalog.registry();
        let entries = config
            .map(|c| c.mcp_servers)
            .unwrap_or_else(|_| running.iter().map(|(name, server)| (name.clone(), server.config().clone())).collect());
        let servers = entries
            .into_iter()
            .map(|(name, config)| {
                let source = ToolSource::Mcp { server: name.clone() };
                let other_tool = |word: &str| registry.get(word).is_some_and(|t| t.def().source != source);
                let mut detail = match running.get(&name) {
                    Some(server) => server.detail_linted(&other_tool),
                    None => ServerDetail::idle(&name, &config),
                };
                if let Err(e) = config.spec(&name) {
                    detail.status = SourceStatus::Failed { reason: e.to_string() };
                }
                if let Some(state) = states.iter().find(|s| s.id == format!("mcp:{name}")) {
                    detail.tools.retain(|t| registry.get(&t.name).is_some_and(|tool| tool.def().source == source));
                    detail.skipped.extend(state.skipped.iter().cloned());
                }
                McpServerInfo { enabled: !config.disabled, config, detail }
            })
            .collect();
        Ok(McpOverview { config_path: self.inner.mcp.path.as_ref().map(|p| p.display().to_string()), problem, servers })
    }

    /// Adds (or replaces) a server: plain secrets in `env`/`headers` go to the keychain and the
    /// file keeps references; a stdio server runs only if `confirm` agrees to its command line.
    /// Returns the server's state after its first start (or its wait for approval).
    pub async fn mcp_add(&self, name: &str, mut config: ServerConfig, confirm: &dyn Confirm) -> Result<McpServerInfo> {
        check_name(name).map_err(|e| Error::config(e.to_string()))?;
        config.spec(name).map_err(|e| Error::config(e.to_string()))?;
        self.move_secrets_to_keys(name, &mut config)?;
        let mut file = self.mcp_config()?;
        file.mcp_servers.insert(name.to_owned(), config.clone());
        self.save_mcp_config(&file)?;
        self.remove_mcp_source(name).await;
        if !config.disabled {
            let server = self.add_mcp_source(name, config);
            self.start_mcp_server(&server, confirm).await;
        }
        self.mcp_info(name)
    }

    /// Moves the plain credentials of `config` to the key store; the entry keeps references.
    fn move_secrets_to_keys(&self, name: &str, config: &mut ServerConfig) -> Result<()> {
        let secrets = config.extract_secrets(name);
        if !secrets.is_empty() {
            self.require_writable_keys()?;
            for s in &secrets {
                self.set_key(&s.name, &s.value)?;
            }
        }
        Ok(())
    }

    /// Asks about the server's command line when it is not approved as it is, and starts it
    /// when it may run.
    async fn start_mcp_server(&self, server: &McpServer, confirm: &dyn Confirm) {
        let name = server.name().to_owned();
        let config = server.config().clone();
        if !self.mcp_approved(&name, &config) {
            let change = run_command(&name, &config);
            if !confirm.confirm(std::slice::from_ref(&change)) {
                return;
            }
            if let Err(e) = self.record_command(&name, &config) {
                tracing::warn!(server = %name, "approval not saved: {e}");
                return;
            }
            server.approve();
        }
        server.start(self.inner.tools.catalog.on_change()).await;
    }

    fn mcp_info(&self, name: &str) -> Result<McpServerInfo> {
        self.mcp_servers()?
            .servers
            .into_iter()
            .find(|s| s.detail.name == name)
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("There is no MCP server named '{name}'.")))
    }

    /// Removes a server from the config and stops it. Its keys stay in the keychain.
    pub async fn mcp_remove(&self, name: &str) -> Result<()> {
        let mut file = self.mcp_config()?;
        if file.mcp_servers.remove(name).is_none() {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no MCP server named '{name}'.")));
        }
        self.save_mcp_config(&file)?;
        self.remove_mcp_source(name).await;
        update_trust(&self.inner.store, |all| {
            all.remove(name);
        })
    }

    /// Enables (starting it, if its command is approved or `confirm` agrees) or disables
    /// (stopping it) a server.
    pub async fn mcp_set_enabled(&self, name: &str, enabled: bool, confirm: &dyn Confirm) -> Result<McpServerInfo> {
        let mut file = self.mcp_config()?;
        let Some(entry) = file.mcp_servers.get_mut(name) else {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no MCP server named '{name}'.")));
        };
        entry.disabled = !enabled;
        let config = entry.clone();
        self.save_mcp_config(&file)?;
        self.remove_mcp_source(name).await;
        if enabled {
            let server = self.add_mcp_source(name, config);
            self.start_mcp_server(&server, confirm).await;
        }
        self.mcp_info(name)
    }

    /// Asks `confirm` about a server's command line and runs it when the person agrees.
    pub async fn mcp_approve(&self, name: &str, confirm: &dyn Confirm) -> Result<McpServerInfo> {
        let server = self.mcp_server(name)?;
        self.start_mcp_server(&server, confirm).await;
        self.mcp_info(name)
    }

    /// Stops a server and starts it again (after the person fixed what made it fail).
    pub async fn mcp_restart(&self, name: &str) -> Result<McpServerInfo> {
        let server = self.mcp_server(name)?;
        server.restart().await;
        self.mcp_info(name)
    }

    /// Offers the tools of a server that were held back (changed since approved, or added
    /// since), once `confirm` agrees to them as they are now, the lint's findings shown with them.
    pub fn mcp_approve_tools(&self, name: &str, confirm: &dyn Confirm) -> Result<McpServerInfo> {
        let server = self.mcp_server(name)?;
        let held = self.mcp_info(name)?.detail.held;
        if held.is_empty() {
            return self.mcp_info(name);
        }
        let change = Widening::ChangedTools { server: name.to_owned(), tools: held.clone() };
        if !confirm.confirm(std::slice::from_ref(&change)) {
            return Err(Error::config(format!("Not changed: {}", change.describe())));
        }
        // Exactly the definitions shown: one that changed again while the dialog was open stays held.
        server.approve_tools(&held).map_err(|e| Error::new(ErrorKind::Storage, e))?;
        self.mcp_info(name)
    }

    /// Signs in to a remote server that asks for it: the person finishes in `browser` (within
    /// five minutes); the tokens go to the key store and the server connects again.
    pub async fn mcp_sign_in(&self, name: &str, browser: &dyn Browser) -> Result<McpServerInfo> {
        self.require_writable_keys()?;
        let server = self.mcp_server(name)?;
        server.sign_in(browser).await.map_err(|e| Error::new(ErrorKind::Auth, format!("'{name}': {e}")))?;
        self.mcp_info(name)
    }

    /// Forgets a remote server's sign-in and connects again.
    pub async fn mcp_sign_out(&self, name: &str) -> Result<McpServerInfo> {
        self.mcp_server(name)?.sign_out().await;
        self.mcp_info(name)
    }

    /// The last lines a server wrote to stderr.
    pub fn mcp_logs(&self, name: &str) -> Result<Vec<String>> {
        Ok(self.mcp_server(name)?.stderr())
    }

    /// Other apps' config files found on this system.
    pub fn mcp_import_sources(&self) -> Vec<ImportSource> {
        import_sources().into_iter().filter(|s| Path::new(&s.path).is_file()).collect()
    }

    fn read_import(&self, path: &Path) -> Result<(McpConfig, Vec<String>)> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::new(ErrorKind::NotFound, format!("{}: {e}", path.display())))?;
        McpConfig::import(&text).map_err(|e| Error::config(format!("{}: {e}", path.display())))
    }

    /// What importing `path` (Claude Desktop's or Cursor's config) would add.
    pub fn mcp_import_preview(&self, path: &Path) -> Result<ImportPreview> {
        let (imported, notes) = self.read_import(path)?;
        Ok(import_preview(path, &imported, notes, &self.mcp_config()?))
    }

    /// Imports the servers of `path` that do not exist here yet. Their commands are shown to
    /// `confirm` together; those it agrees to start, the rest wait for approval.
    pub async fn mcp_import(&self, path: &Path, confirm: &dyn Confirm) -> Result<ImportPreview> {
        let (imported, notes) = self.read_import(path)?;
        let mut file = self.mcp_config()?;
        let preview = import_preview(path, &imported, notes, &file);
        let mut added = Vec::new();
        for (name, mut config) in imported.mcp_servers {
            if file.mcp_servers.contains_key(&name) {
                continue;
            }
            self.move_secrets_to_keys(&name, &mut config)?;
            file.mcp_servers.insert(name.clone(), config.clone());
            added.push((name, config));
        }
        self.save_mcp_config(&file)?;
        let runnable: Vec<&(String, ServerConfig)> =
            added.iter().filter(|(name, c)| !c.disabled && c.spec(name).is_ok()).collect();
        let changes: Vec<Widening> = runnable
            .iter()
            .filter(|(name, c)| !self.mcp_approved(name, c))
            .map(|(name, c)| run_command(name, c))
            .collect();
        if !changes.is_empty() && confirm.confirm(&changes) {
            for (name, config) in &runnable {
                self.record_command(name, config)?;
            }
        }
        // Servers whose command was not agreed to wait for approval; the rest start together.
        let starts: Vec<_> = runnable
            .into_iter()
            .map(|(name, config)| {
                let server = self.add_mcp_source(name, config.clone());
                let on_change = self.inner.tools.catalog.on_change();
                async move { server.start(on_change).await }
            })
            .collect();
        futures::future::join_all(starts).await;
        Ok(preview)
    }
}

/// What the person is asked before a stdio server's command runs: the command line and every
/// key its environment takes from the key store.
fn run_command(name: &str, config: &ServerConfig) -> Widening {
    Widening::RunCommand {
        server: name.to_owned(),
        command_line: config.command_line().unwrap_or_default(),
        keys: config.secret_refs(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_in_tokens_live_in_the_key_store_under_the_servers_entry() {
        let service = Service::in_memory().unwrap();
        let vault = KeyVault(Arc::downgrade(&service.inner));
        let key = switchboard_mcp::oauth::token_key("docs");
        assert_eq!(key, "mcp-docs-oauth");
        assert_eq!(vault.load(&key), None);
        vault.save(&key, r#"{"client_id":"c","token_response":null}"#).unwrap();
        assert_eq!(vault.load(&key).as_deref(), Some(r#"{"client_id":"c","token_response":null}"#));
        assert!(service.keys().get(&key).unwrap().is_some(), "in the key store, not a file");
        vault.clear(&key);
        assert_eq!(vault.load(&key), None);
    }
}
