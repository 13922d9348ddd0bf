//! The engine as a service: what a shell (the desktop app, the CLI) needs, behind one API.
//!
//! A [`Service`] owns the store, the keys, the tool registry and the turns that are running. Shells
//! stay thin: a desktop command or a CLI subcommand is a few lines that call one method here.
//!
//! Architecture invariant: no knowledge of Tauri, windows or terminals. Events leave through an
//! [`EventSink`] the shell provides; the store's recorder always sees them first.

pub mod contract;
pub mod ipc;
pub mod settings;

use futures::FutureExt;
use futures::future::BoxFuture;
use ipc::{ApprovalChoice, ConversationView, ProviderInfo, SendRequest, ToolInfo, TurnStarted};
use settings::Settings;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{
    CancellationToken, ChatEvent, Engine, ErrorKind, EventSink, Provider, ProviderError, Secrets, ToolRegistry,
    TurnInput, TurnOptions, TurnOutcome,
};
use switchboard_providers::{ProviderKind, ProviderSettings};
use switchboard_secrets::{EnvStore, SecretStore, SecretValue, ToolSecrets};
use switchboard_store::{ConversationSummary, MessagePage, ProviderProfile, Recorder, Store};
use tokio::sync::oneshot;

/// How many of a conversation's last messages [`Service::open`] returns: a few screens' worth.
pub const OPEN_PAGE: usize = 60;

/// The most messages one [`Service::older_messages`] call returns.
pub const OLDER_PAGE_MAX: usize = 200;

/// A failure a shell reports: a kind to act on and a message to show.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// Classification.
    pub kind: ErrorKind,
    /// What to tell the person.
    pub message: String,
}

impl Error {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// A configuration problem the person can fix.
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }
}

impl From<switchboard_store::Error> for Error {
    fn from(e: switchboard_store::Error) -> Self {
        Self::new(e.kind(), e.to_string())
    }
}

impl From<ProviderError> for Error {
    fn from(e: ProviderError) -> Self {
        Self::new(e.kind, e.message)
    }
}

impl From<switchboard_core::RegistryError> for Error {
    fn from(e: switchboard_core::RegistryError) -> Self {
        Self::new(ErrorKind::Internal, e.to_string())
    }
}

impl From<switchboard_secrets::Error> for Error {
    fn from(e: switchboard_secrets::Error) -> Self {
        Self::new(ErrorKind::Auth, e.to_string())
    }
}

/// `Result` of this crate.
pub type Result<T> = std::result::Result<T, Error>;

struct PendingApproval {
    conversation_id: String,
    tool: String,
    reply: oneshot::Sender<ApprovalDecision>,
}

struct Inner {
    store: Store,
    keys: RwLock<Keys>,
    /// The registry and the web settings it was built for: rebuilt only when they change.
    registry: RwLock<(settings::WebPrefs, Arc<ToolRegistry>)>,
    running: Mutex<HashMap<String, CancellationToken>>,
    approvals: Mutex<HashMap<String, PendingApproval>>,
}

impl Inner {
    /// The turn no longer counts as running; stopping it is then a no-op.
    fn deregister(&self, message_id: &str) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(message_id);
    }
}

/// The engine, the store and the keys, for one person's data directory.
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("store", &self.inner.store.path()).finish_non_exhaustive()
    }
}

/// A turn ready to run: rows created, provider and engine built.
pub struct PreparedTurn {
    /// The ids of the turn's rows.
    pub started: TurnStarted,
    input: TurnInput,
    provider: Box<dyn Provider>,
    engine: Engine,
    recorder: Recorder,
    cancel: CancellationToken,
    profile: ProviderProfile,
}

impl std::fmt::Debug for PreparedTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedTurn").field("started", &self.started).finish_non_exhaustive()
    }
}

/// How a turn went, for shells that wait for it (the CLI).
#[derive(Debug)]
pub struct TurnReport {
    /// The ids of the turn's rows.
    pub started: TurnStarted,
    /// The engine's outcome.
    pub outcome: TurnOutcome,
    /// The provider profile used.
    pub profile: ProviderProfile,
    /// Set when the answer could not be saved.
    pub storage_error: Option<Error>,
}

/// The recorder first (durability), then the shell's sink.
struct Fanout {
    recorder: Recorder,
    shell: Arc<dyn EventSink>,
    inner: Arc<Inner>,
    message_id: String,
}

impl EventSink for Fanout {
    fn emit(&self, event: ChatEvent) {
        let done = matches!(event, ChatEvent::Done { .. });
        self.recorder.emit(event.clone());
        if done {
            // Whoever hears `Done` may at once open the conversation or start the next turn: the
            // answer is on disk and the turn no longer counts as running before the shell hears it.
            self.recorder.flush();
            self.inner.deregister(&self.message_id);
        }
        self.shell.emit(event);
    }

    fn tick(&self) {
        self.recorder.tick();
        self.shell.tick();
    }

    fn flush(&self) {
        self.shell.flush();
    }
}

/// Asks the UI through [`Service::resolve_approval`].
struct UiApprover {
    inner: Arc<Inner>,
}

impl Approver for UiApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        self.inner.approvals.lock().unwrap_or_else(|p| p.into_inner()).insert(
            request.call_id.clone(),
            PendingApproval { conversation_id: request.conversation_id, tool: request.name, reply: tx },
        );
        let call_id = request.call_id;
        let inner = Arc::clone(&self.inner);
        async move {
            let decision = rx.await.unwrap_or(ApprovalDecision::Deny);
            inner.approvals.lock().unwrap_or_else(|p| p.into_inner()).remove(&call_id);
            decision
        }
        .boxed()
    }
}

/// Where keys are kept, and why (shown in Settings).
#[derive(Clone)]
struct Keys {
    store: Arc<dyn SecretStore>,
    mode: ipc::KeyMode,
    problem: Option<String>,
}

impl Service {
    /// A service over `store`, reading keys from `keys` (and the environment as a fallback),
    /// with the built-in tools configured from the stored settings.
    pub fn new(store: Store, keys: Arc<dyn SecretStore>) -> Result<Self> {
        Self::with_keys(store, keys, ipc::KeyMode::Keychain, None)
    }

    /// Like [`Service::new`], saying which kind of key store this is and, when the keychain could
    /// not be used, why (Settings shows it with the choice of fallback).
    pub fn with_keys(
        store: Store,
        keys: Arc<dyn SecretStore>,
        mode: ipc::KeyMode,
        problem: Option<String>,
    ) -> Result<Self> {
        let web = Settings::load(&store)?.web;
        let registry = switchboard_tools::builtin_registry_with(&web.tools_config())?;
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                keys: RwLock::new(Keys { store: keys, mode, problem }),
                registry: RwLock::new((web, Arc::new(registry))),
                running: Mutex::default(),
                approvals: Mutex::default(),
            }),
        })
    }

    fn keys(&self) -> Arc<dyn SecretStore> {
        Arc::clone(&self.inner.keys.read().unwrap_or_else(|p| p.into_inner()).store)
    }

    /// Switches the key store (the keychain became available, or the person chose a fallback).
    pub fn set_key_store(&self, keys: Arc<dyn SecretStore>, mode: ipc::KeyMode, problem: Option<String>) {
        *self.inner.keys.write().unwrap_or_else(|p| p.into_inner()) = Keys { store: keys, mode, problem };
    }

    /// Where keys are kept now, and what went wrong with the keychain if it is not used.
    pub fn keychain_status(&self) -> ipc::KeychainStatus {
        let keys = self.inner.keys.read().unwrap_or_else(|p| p.into_inner());
        ipc::KeychainStatus { mode: keys.mode, problem: keys.problem.clone() }
    }

    /// The keys Settings manages: one per provider profile, plus the web search services.
    pub fn keys_overview(&self) -> Result<Vec<ipc::KeyInfo>> {
        let mut out = Vec::new();
        for p in self.inner.store.providers()? {
            let label = format!("Provider '{}' ({})", p.name, p.base_url);
            out.push(self.key_info(&p.name, label, ipc::KeyPurpose::Provider)?);
        }
        out.push(self.key_info("tavily", "Tavily (web search)".into(), ipc::KeyPurpose::Tool)?);
        out.push(self.key_info("exa", "Exa (web search)".into(), ipc::KeyPurpose::Tool)?);
        Ok(out)
    }

    fn key_info(&self, name: &str, label: String, purpose: ipc::KeyPurpose) -> Result<ipc::KeyInfo> {
        let status =
            switchboard_secrets::status(self.keys().as_ref(), name).unwrap_or(switchboard_secrets::KeyStatus {
                name: name.to_owned(),
                is_set: false,
                last4: None,
                source: "unavailable",
            });
        Ok(ipc::KeyInfo {
            name: name.to_owned(),
            label,
            purpose,
            is_set: status.is_set,
            last4: status.last4,
            source: status.source.to_owned(),
            env_var: switchboard_secrets::env_var_for(name),
        })
    }

    /// Stores or replaces a key. The value goes to the key store and nowhere else.
    pub fn set_key(&self, name: &str, value: &str) -> Result<ipc::KeyInfo> {
        let value = value.trim();
        if value.is_empty() {
            return Err(Error::config("The key is empty."));
        }
        switchboard_secrets::validate_name(name).map_err(|e| Error::config(e.to_string()))?;
        self.keys().set(name, &SecretValue::new(value))?;
        self.key_info_for(name)
    }

    /// Deletes a key.
    pub fn delete_key(&self, name: &str) -> Result<ipc::KeyInfo> {
        self.keys().delete(name)?;
        self.key_info_for(name)
    }

    fn key_info_for(&self, name: &str) -> Result<ipc::KeyInfo> {
        self.keys_overview()?
            .into_iter()
            .find(|k| k.name == name)
            .map_or_else(|| self.key_info(name, name.to_owned(), ipc::KeyPurpose::Tool), Ok)
    }

    /// Where the data lives.
    pub fn data_info(&self) -> ipc::DataInfo {
        let db = self.inner.store.path().map(|p| p.display().to_string());
        ipc::DataInfo {
            data_dir: self.inner.store.path().and_then(|p| p.parent()).map(|p| p.display().to_string()),
            database: db,
        }
    }

    /// Every conversation with its messages, as one JSON document.
    pub fn export_all(&self) -> Result<serde_json::Value> {
        let mut conversations = Vec::new();
        for c in self.inner.store.conversations()? {
            let messages = self.inner.store.messages(&c.id)?;
            conversations.push(serde_json::json!({"conversation": c, "messages": messages}));
        }
        Ok(serde_json::json!({"format": "switchboard-export", "version": 1, "conversations": conversations}))
    }

    /// Writes [`Service::export_all`] to a file in the data directory's `exports` folder.
    pub fn export_all_to_file(&self) -> Result<String> {
        let dir = self
            .inner
            .store
            .path()
            .and_then(|p| p.parent())
            .map(|p| p.join("exports"))
            .ok_or_else(|| Error::config("This database has no folder to export to."))?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::new(ErrorKind::Storage, format!("Cannot create {}: {e}", dir.display())))?;
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let path = dir.join(format!("switchboard-export-{stamp}.json"));
        let text = serde_json::to_string_pretty(&self.export_all()?)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        std::fs::write(&path, text)
            .map_err(|e| Error::new(ErrorKind::Storage, format!("Cannot write {}: {e}", path.display())))?;
        Ok(path.display().to_string())
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The registry for the current web settings, rebuilt when they changed.
    fn registry(&self) -> Arc<ToolRegistry> {
        let web = self.settings().map(|s| s.web).unwrap_or_default();
        {
            let current = self.inner.registry.read().unwrap_or_else(|p| p.into_inner());
            if current.0 == web {
                return Arc::clone(&current.1);
            }
        }
        match switchboard_tools::builtin_registry_with(&web.tools_config()) {
            Ok(registry) => {
                let registry = Arc::new(registry);
                *self.inner.registry.write().unwrap_or_else(|p| p.into_inner()) = (web, Arc::clone(&registry));
                registry
            }
            Err(e) => {
                tracing::error!("tool registry not rebuilt: {e}");
                Arc::clone(&self.inner.registry.read().unwrap_or_else(|p| p.into_inner()).1)
            }
        }
    }

    // ----- settings and providers ---------------------------------------------------------------

    /// Every setting.
    pub fn settings(&self) -> Result<Settings> {
        Settings::load(&self.inner.store)
    }

    /// Replaces every setting; the next turn uses them.
    pub fn update_settings(&self, settings: &Settings) -> Result<()> {
        if let Some(p) = &settings.default_provider {
            self.profile(Some(p))?;
        }
        settings.validate()?;
        settings.save(&self.inner.store)
    }

    /// Provider profiles, the default marked.
    pub fn providers(&self) -> Result<Vec<ProviderInfo>> {
        let default = self.default_provider_name()?;
        Ok(self
            .inner
            .store
            .providers()?
            .into_iter()
            .map(|p| ProviderInfo {
                is_default: default.as_deref() == Some(p.name.as_str()),
                name: p.name,
                kind: p.kind,
                base_url: p.base_url,
                model: p.model,
            })
            .collect())
    }

    fn default_provider_name(&self) -> Result<Option<String>> {
        if let Some(name) = self.inner.store.setting::<String>(settings::DEFAULT_PROVIDER)? {
            return Ok(Some(name));
        }
        let all = self.inner.store.providers()?;
        Ok(if all.len() == 1 { Some(all[0].name.clone()) } else { None })
    }

    /// Adds or replaces a profile; the first one becomes the default.
    pub fn add_provider(&self, profile: &ProviderProfile, make_default: bool) -> Result<()> {
        let kind = ProviderKind::parse(&profile.kind)?;
        switchboard_secrets::validate_name(&profile.name)
            .map_err(|e| Error::config(format!("Invalid profile name: {e}")))?;
        if !(profile.base_url.starts_with("http://") || profile.base_url.starts_with("https://")) {
            return Err(Error::config(format!(
                "The base URL '{}' must start with http:// or https://.",
                profile.base_url
            )));
        }
        let profile = ProviderProfile { kind: kind.as_str().into(), ..profile.clone() };
        self.inner.store.upsert_provider(&profile)?;
        if make_default || self.inner.store.setting::<String>(settings::DEFAULT_PROVIDER)?.is_none() {
            self.inner.store.set_setting(settings::DEFAULT_PROVIDER, &profile.name)?;
        }
        Ok(())
    }

    /// Removes a profile.
    pub fn remove_provider(&self, name: &str) -> Result<()> {
        self.profile(Some(name))?;
        self.inner.store.delete_provider(name)?;
        if self.inner.store.setting::<String>(settings::DEFAULT_PROVIDER)?.as_deref() == Some(name) {
            self.inner.store.delete_setting(settings::DEFAULT_PROVIDER)?;
        }
        Ok(())
    }

    /// The profile `name`, or the default one; the error says how to add one.
    pub fn profile(&self, name: Option<&str>) -> Result<ProviderProfile> {
        let profiles = self.inner.store.providers()?;
        let known = || {
            if profiles.is_empty() {
                "No provider profiles exist yet.".to_owned()
            } else {
                format!("Known profiles: {}.", profiles.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "))
            }
        };
        let wanted = match name {
            Some(n) => n.to_owned(),
            None => self.default_provider_name()?.ok_or_else(|| {
                Error::config(format!(
                    "No provider chosen. Add one (kind, base URL, model) and make it the default. {}",
                    known()
                ))
            })?,
        };
        profiles.iter().find(|p| p.name == wanted).cloned().ok_or_else(|| {
            Error::config(format!(
                "Unknown provider '{wanted}'. {} Add it with `switchboard providers add {wanted} --kind openai --base-url URL`.",
                known()
            ))
        })
    }

    /// The key of a profile: the key store, then `SWITCHBOARD_KEY_<NAME>`, then the kind's usual
    /// variable. `None` when there is none (local servers often need none).
    pub fn provider_key(&self, profile: &ProviderProfile) -> Result<Option<SecretValue>> {
        let kind = ProviderKind::parse(&profile.kind)?;
        match self.keys().get(&profile.name) {
            Ok(Some(key)) => return Ok(Some(key)),
            Ok(None) => {}
            // A local server needs no key, so an unreadable keychain must not block the turn; if
            // the provider does need one, its 401 says so and Settings explains the keychain.
            Err(e) => tracing::warn!("the key store could not be read: {e}"),
        }
        Ok(EnvStore::new().with_fallback(&profile.name, kind.usual_key_env()).get(&profile.name)?)
    }

    fn build_provider(&self, profile: &ProviderProfile) -> Result<Box<dyn Provider>> {
        let kind = ProviderKind::parse(&profile.kind)?;
        Ok(switchboard_providers::build(ProviderSettings {
            kind,
            base_url: profile.base_url.clone(),
            api_key: self.provider_key(profile)?,
        })?)
    }

    /// The models a provider lists.
    pub async fn models(&self, provider: Option<&str>) -> Result<Vec<String>> {
        let profile = self.profile(provider)?;
        let chat = switchboard_providers::OpenAiChat::new(switchboard_providers::OpenAiConfig {
            base_url: profile.base_url.clone(),
            api_key: self.provider_key(&profile)?,
        })?;
        Ok(chat.list_models().await?)
    }

    // ----- conversations -------------------------------------------------------------------------

    /// Conversations, newest first.
    pub fn conversations(&self) -> Result<Vec<ConversationSummary>> {
        Ok(self.inner.store.conversations()?)
    }

    /// Conversations whose title or messages contain `query`.
    pub fn search(&self, query: &str) -> Result<Vec<ConversationSummary>> {
        Ok(self.inner.store.search(query)?)
    }

    /// A conversation with everything needed to draw it: its last [`OPEN_PAGE`] messages (a long
    /// conversation's older ones are read with [`Service::older_messages`] as the person scrolls up).
    pub fn open(&self, id: &str) -> Result<ConversationView> {
        let store = &self.inner.store;
        let page = store.messages_page(id, None, OPEN_PAGE)?;
        Ok(ConversationView {
            conversation: store.conversation(id)?,
            messages: page.messages,
            earlier: page.earlier,
            disabled_tools: store.disabled_tools(id)?.into_iter().collect(),
        })
    }

    /// A conversation with every message (for transcripts and exports).
    pub fn open_all(&self, id: &str) -> Result<ConversationView> {
        let store = &self.inner.store;
        Ok(ConversationView {
            conversation: store.conversation(id)?,
            messages: store.messages(id)?,
            earlier: 0,
            disabled_tools: store.disabled_tools(id)?.into_iter().collect(),
        })
    }

    /// The (at most `limit`, capped at [`OLDER_PAGE_MAX`]) messages of a conversation that come
    /// just before the message `before`, oldest first, and how many come earlier still.
    pub fn older_messages(&self, id: &str, before: &str, limit: u32) -> Result<MessagePage> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX).min(OLDER_PAGE_MAX);
        Ok(self.inner.store.messages_page(id, Some(before), limit)?)
    }

    /// Renames a conversation.
    pub fn rename(&self, id: &str, title: &str) -> Result<()> {
        let title = title.trim();
        if title.is_empty() {
            return Err(Error::config("A conversation title cannot be empty."));
        }
        Ok(self.inner.store.rename(id, title)?)
    }

    /// Deletes a conversation (stopping its turn if one runs).
    pub fn delete(&self, id: &str) -> Result<()> {
        for m in self.inner.store.messages(id)? {
            self.stop(&m.id);
        }
        Ok(self.inner.store.delete(id)?)
    }

    // ----- tools ---------------------------------------------------------------------------------

    /// Removes a provider profile and its key.
    pub fn remove_provider_and_key(&self, name: &str) -> Result<()> {
        self.remove_provider(name)?;
        if let Err(e) = self.keys().delete(name) {
            tracing::warn!("the key of '{name}' could not be deleted: {e}");
        }
        Ok(())
    }

    /// Every tool, with its state in Settings and, when given, in a conversation.
    pub fn tools(&self, conversation_id: Option<&str>) -> Result<Vec<ToolInfo>> {
        let settings = self.settings()?;
        let tool_settings = settings.engine_config().tool_settings;
        let chat_disabled = match conversation_id {
            Some(id) => self.inner.store.disabled_tools(id)?,
            None => Default::default(),
        };
        Ok(self
            .registry()
            .defs()
            .map(|d| ToolInfo {
                name: d.name.clone(),
                description: d.description.clone(),
                source: d.source.clone(),
                enabled: !tool_settings.disabled.contains(&d.name),
                disabled_for_chat: chat_disabled.contains(&d.name),
                approval: switchboard_core::policy::approval_for(d, &tool_settings),
                exclusive: d.exclusive,
                takes_control: d.takes_control,
                parameters: d.parameters.clone(),
            })
            .collect())
    }

    /// Disables (or re-enables) a tool for one conversation; remembered with the chat.
    pub fn set_chat_tool_disabled(&self, conversation_id: &str, name: &str, disabled: bool) -> Result<()> {
        let mut set = self.inner.store.disabled_tools(conversation_id)?;
        if disabled {
            set.insert(name.to_owned());
        } else {
            set.remove(name);
        }
        Ok(self.inner.store.set_disabled_tools(conversation_id, &set)?)
    }

    // ----- turns ---------------------------------------------------------------------------------

    /// Creates the turn's rows and everything it needs. Fails before any row is written when the
    /// provider, model or key is missing.
    pub fn prepare(&self, request: SendRequest) -> Result<PreparedTurn> {
        if request.text.trim().is_empty() {
            return Err(Error::config("The message is empty."));
        }
        let store = &self.inner.store;
        let profile = self.profile(request.provider.as_deref())?;
        let model = request.model.clone().or_else(|| profile.model.clone()).ok_or_else(|| {
            Error::config(format!(
                "No model chosen for provider '{}'. Pick a model, or set the profile's default model.",
                profile.name
            ))
        })?;
        let provider = self.build_provider(&profile)?;
        let settings = self.settings()?;
        let tool_secrets: Arc<dyn Secrets> = Arc::new(ToolSecrets(self.keys()));
        let engine = Engine::new(settings.engine_config(), self.registry(), tool_secrets);

        let rows = store.begin_turn(request.conversation_id.as_deref(), &request.text, &profile.name, &model)?;
        if !request.disable_for_chat.is_empty() {
            let mut set = store.disabled_tools(&rows.conversation_id)?;
            set.extend(request.disable_for_chat.iter().cloned());
            store.set_disabled_tools(&rows.conversation_id, &set)?;
        }
        let input = TurnInput {
            conversation_id: rows.conversation_id.clone(),
            user_message_id: rows.user_message_id.clone(),
            message_id: rows.message_id.clone(),
            provider_name: profile.name.clone(),
            model,
            system_prompt: None,
            history: store.history(&rows.conversation_id)?,
            options: TurnOptions {
                use_tools: request.use_tools,
                forced: request.forced,
                disabled_for_chat: store.disabled_tools(&rows.conversation_id)?,
                dry_run: request.dry_run,
                max_iterations: None,
                approved_tools: store.approved_tools(&rows.conversation_id)?,
            },
        };
        let cancel = CancellationToken::new();
        self.inner.running.lock().unwrap_or_else(|p| p.into_inner()).insert(rows.message_id.clone(), cancel.clone());
        Ok(PreparedTurn {
            started: TurnStarted {
                conversation_id: rows.conversation_id,
                message_id: rows.message_id.clone(),
                user_message_id: rows.user_message_id,
            },
            input,
            provider,
            engine,
            recorder: store.recorder(&rows.message_id),
            cancel,
            profile,
        })
    }

    /// Sets the system prompt and the iteration limit of a prepared turn (CLI flags).
    pub fn customize(turn: &mut PreparedTurn, system_prompt: Option<String>, max_iterations: Option<u32>) {
        turn.input.system_prompt = system_prompt;
        turn.input.options.max_iterations = max_iterations;
    }

    /// Runs a prepared turn to its end. Events go to the recorder, then to `sink`.
    pub async fn run(&self, turn: PreparedTurn, sink: Arc<dyn EventSink>, approver: &dyn Approver) -> TurnReport {
        let PreparedTurn { started, input, provider, engine, recorder, cancel, profile } = turn;
        let fanout = Arc::new(Fanout {
            recorder,
            shell: sink,
            inner: Arc::clone(&self.inner),
            message_id: started.message_id.clone(),
        });
        let outcome = engine.run_turn(provider.as_ref(), input, fanout.clone(), approver, cancel).await;
        fanout.recorder.flush();
        self.inner.deregister(&started.message_id);
        let storage_error = fanout.recorder.take_error().map(Error::from);
        TurnReport { started, outcome, profile, storage_error }
    }

    /// The token that stops a prepared turn (the CLI wires Ctrl-C to it).
    pub fn cancel_token(turn: &PreparedTurn) -> CancellationToken {
        turn.cancel.clone()
    }

    /// Starts a turn in the background; approvals go through [`Service::resolve_approval`].
    /// Returns as soon as the rows exist; the events follow on `sink`.
    pub fn send(&self, request: SendRequest, sink: Arc<dyn EventSink>) -> Result<TurnStarted> {
        let turn = self.prepare(request)?;
        let started = turn.started.clone();
        let this = self.clone();
        tokio::spawn(async move {
            let approver = UiApprover { inner: Arc::clone(&this.inner) };
            let report = this.run(turn, sink, &approver).await;
            if let Some(e) = report.storage_error {
                tracing::error!("the answer could not be saved: {e}");
            }
        });
        Ok(started)
    }

    /// Drops the conversation's last answer and asks its question again.
    pub fn regenerate(
        &self,
        conversation_id: &str,
        mut request: SendRequest,
        sink: Arc<dyn EventSink>,
    ) -> Result<TurnStarted> {
        let text = self.inner.store.take_last_turn(conversation_id)?;
        request.conversation_id = Some(conversation_id.to_owned());
        request.text = text;
        self.send(request, sink)
    }

    /// Stops a running turn; `false` when it is not running.
    pub fn stop(&self, message_id: &str) -> bool {
        match self.inner.running.lock().unwrap_or_else(|p| p.into_inner()).get(message_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Answers a pending approval. "For this chat" and "always" are remembered.
    pub fn resolve_approval(&self, call_id: &str, choice: ApprovalChoice) -> Result<()> {
        let pending = self.inner.approvals.lock().unwrap_or_else(|p| p.into_inner()).remove(call_id);
        let Some(pending) = pending else {
            return Err(Error::config(format!("No tool call '{call_id}' is waiting for approval.")));
        };
        let decision = match choice {
            ApprovalChoice::Once => ApprovalDecision::Once,
            ApprovalChoice::Chat => {
                self.inner.store.approve_tool_for_chat(&pending.conversation_id, &pending.tool)?;
                ApprovalDecision::ForChat
            }
            ApprovalChoice::Always => {
                let mut s = self.settings()?;
                s.tools.approval.insert(pending.tool.clone(), switchboard_core::ApprovalPolicy::Auto);
                s.save(&self.inner.store)?;
                ApprovalDecision::Always
            }
            ApprovalChoice::Deny => ApprovalDecision::Deny,
        };
        // The turn may have been stopped meanwhile; then nobody waits and that is fine.
        let _ = pending.reply.send(decision);
        Ok(())
    }

    /// Message ids of the turns running now.
    pub fn running(&self) -> Vec<String> {
        self.inner.running.lock().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect()
    }
}
