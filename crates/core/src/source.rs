//! Tool sources, and the registry composed from them.
//!
//! A [`Source`] owns a set of tools and their lifecycle: the built-in tools, one MCP server, a
//! file of HTTP tools, the agents. It can change its tools while the app runs (a server's
//! `tools/list_changed`, a reconfigured built-in) and says so through the [`OnChange`] it was
//! started with. The [`Catalog`] composes every source into one [`ToolRegistry`] and swaps it
//! atomically: a turn takes one snapshot ([`Catalog::registry`]) and sees one consistent tool set
//! from its first request to its last, whatever changes meanwhile.
//!
//! One broken source never hides the others: a tool that cannot be registered (a schema that is
//! not JSON Schema, a name listed twice by its own source) is left out with the reason recorded
//! against its source, and every other tool loads.
//!
//! No source can take another's name, and no clash is won by the order sources were added in:
//! a name a source reserves ([`Source::reserved_names`], the built-ins' every name) or the
//! agents' prefix ([`AGENT_PREFIX`]) is refused to every other source; a name two sources both
//! offer is offered by neither, and each is told why ([`Catalog::refusal`]).

use crate::names::AGENT_PREFIX;
use crate::registry::ToolRegistry;
use crate::tool::Tool;
use crate::vocab::ToolSource;
use futures::future::BoxFuture;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};

/// Where a source is in its life, as Settings shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum SourceStatus {
    /// Starting (a process spawning, a handshake in flight); its tools are not offered yet.
    Starting,
    /// Its tools are offered.
    Ready,
    /// It could not start or stopped working; `reason` says why in words.
    Failed {
        /// What went wrong, for the person.
        reason: String,
    },
    /// Stopped on purpose (disabled, or the app is closing).
    Stopped,
    /// Waiting for the person: it will not start until they approve what it runs (a new or
    /// changed command line); `reason` says what to approve.
    NeedsApproval {
        /// What the person is asked to approve, in words.
        reason: String,
    },
    /// Waiting for the person to sign in (a remote server that wants OAuth); `reason` says so.
    NeedsSignIn {
        /// Why, in words.
        reason: String,
    },
}

/// A source as Settings lists it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceState {
    /// The source's id (`builtin`, `mcp:time`, ...).
    pub id: String,
    /// Where it is in its life.
    pub status: SourceStatus,
    /// How many of its tools the registry offers.
    pub tools: u32,
    /// Tools it has that were left out, each with the reason.
    pub skipped: Vec<String>,
}

/// What a source calls when its tools changed; the catalog then rebuilds the registry.
pub type OnChange = Arc<dyn Fn() + Send + Sync>;

/// A set of tools with a lifecycle. Implementations keep their own state behind `&self` (a
/// source is shared between the catalog and whatever drives it).
pub trait Source: Send + Sync {
    /// A stable id, unique in the catalog (`builtin`, `mcp:<server>`, `http`, `agents`).
    fn id(&self) -> &str;

    /// Where the source is in its life.
    fn status(&self) -> SourceStatus;

    /// The tools it offers now (none unless ready).
    fn tools(&self) -> Vec<Arc<dyn Tool>>;

    /// Names only this source's tools may have, whether or not it offers them now (the
    /// built-ins' names); another source's tool of such a name is refused.
    fn reserved_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// Starts the source. `on_change` is to be called whenever its tools change, from any
    /// thread, for as long as it runs. Returns when it is ready or has failed; the catalog runs
    /// every source's start concurrently, so a slow one delays nobody.
    fn start(&self, on_change: OnChange) -> BoxFuture<'_, ()> {
        drop(on_change);
        Box::pin(async {})
    }

    /// Asks the source to look at its tools again (a server's list, a config file).
    fn refresh(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Stops the source and releases what it holds (processes, connections).
    fn stop(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Why a source could not be added.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// Another source already has this id.
    #[error("a tool source with the id '{0}' already exists")]
    DuplicateSource(String),
}

/// Every source, and the registry composed from them.
pub struct Catalog {
    sources: Mutex<Vec<Arc<dyn Source>>>,
    current: RwLock<Composed>,
    /// Held while composing, so two rebuilds never interleave and the last one wins.
    rebuilding: Mutex<()>,
    weak: Weak<Catalog>,
}

#[derive(Default)]
struct Composed {
    registry: Arc<ToolRegistry>,
    /// Per source id: the tools left out, with the reason.
    skipped: Vec<(String, Vec<String>)>,
    /// Tools refused for their name, each with its source and the reason.
    refused: Vec<(String, ToolSource, String)>,
    /// Names reserved by a source, with that source's id and how its tools' source reads.
    reserved: BTreeMap<String, (String, String)>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self.lock_sources().iter().map(|s| s.id().to_owned()).collect();
        f.debug_struct("Catalog").field("sources", &ids).finish_non_exhaustive()
    }
}

impl Catalog {
    /// A catalog with no sources (and so an empty registry).
    pub fn new() -> Arc<Catalog> {
        Arc::new_cyclic(|weak| Catalog {
            sources: Mutex::default(),
            current: RwLock::default(),
            rebuilding: Mutex::default(),
            weak: weak.clone(),
        })
    }

    fn lock_sources(&self) -> std::sync::MutexGuard<'_, Vec<Arc<dyn Source>>> {
        self.sources.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a source after the others and composes its current tools in (the order decides no
    /// name clash: see the module doc). It is not started: see [`Catalog::start`].
    pub fn add(&self, source: Arc<dyn Source>) -> Result<(), CatalogError> {
        {
            let mut sources = self.lock_sources();
            if sources.iter().any(|s| s.id() == source.id()) {
                return Err(CatalogError::DuplicateSource(source.id().to_owned()));
            }
            sources.push(source);
        }
        self.rebuild();
        Ok(())
    }

    /// Removes a source and its tools; returns it (to be stopped) if it was there.
    pub fn remove(&self, id: &str) -> Option<Arc<dyn Source>> {
        let removed = {
            let mut sources = self.lock_sources();
            let i = sources.iter().position(|s| s.id() == id)?;
            sources.remove(i)
        };
        self.rebuild();
        Some(removed)
    }

    /// The source with this id.
    pub fn source(&self, id: &str) -> Option<Arc<dyn Source>> {
        self.lock_sources().iter().find(|s| s.id() == id).cloned()
    }

    /// The registry as composed now. A turn keeps this snapshot for its whole life.
    pub fn registry(&self) -> Arc<ToolRegistry> {
        Arc::clone(&self.current.read().unwrap_or_else(|p| p.into_inner()).registry)
    }

    /// What a source calls when its tools change. Holds the catalog weakly: a source that
    /// outlives it calls into nothing.
    pub fn on_change(&self) -> OnChange {
        let weak = self.weak.clone();
        Arc::new(move || {
            if let Some(catalog) = weak.upgrade() {
                catalog.rebuild();
            }
        })
    }

    /// Composes the registry from every source's current tools and swaps it in. A tool whose
    /// name another source reserves, or another source also offers, is left out with the reason.
    pub fn rebuild(&self) {
        let _one_at_a_time = self.rebuilding.lock().unwrap_or_else(|p| p.into_inner());
        let sources: Vec<Arc<dyn Source>> = self.lock_sources().clone();
        let offered: Vec<Vec<Arc<dyn Tool>>> = sources.iter().map(|s| s.tools()).collect();
        let mut reserved: BTreeMap<String, (String, String)> = BTreeMap::new();
        for (source, tools) in sources.iter().zip(&offered) {
            let owner = tools.first().map_or_else(|| source.id().to_owned(), |t| t.def().source.to_string());
            for name in source.reserved_names() {
                reserved.entry(name).or_insert_with(|| (source.id().to_owned(), owner.clone()));
            }
        }
        // First the names no source may take from another, then the clashes among the rest.
        let taken = |id: &str, tool: &Arc<dyn Tool>| -> Option<String> {
            let def = tool.def();
            if let Some((_, owner)) = reserved.get(&def.name).filter(|(o, _)| o != id) {
                return Some(format!(
                    "'{}' is reserved for the {owner} tools; the tool of that name from {} was left out \
                     (a source cannot take another's name)",
                    def.name, def.source
                ));
            }
            (def.name.starts_with(AGENT_PREFIX) && def.source != ToolSource::Agent).then(|| {
                format!(
                    "'{}' starts with '{AGENT_PREFIX}', which only agents' tools may use; the tool from {} was left out",
                    def.name, def.source
                )
            })
        };
        let mut claims: HashMap<&str, Vec<&ToolSource>> = HashMap::new();
        for (source, tools) in sources.iter().zip(&offered) {
            for tool in tools.iter().filter(|t| taken(source.id(), t).is_none()) {
                let def = tool.def();
                let by = claims.entry(def.name.as_str()).or_default();
                if !by.contains(&&def.source) {
                    by.push(&def.source);
                }
            }
        }
        let mut registry = ToolRegistry::new();
        let mut skipped = Vec::new();
        let mut refused = Vec::new();
        for (source, tools) in sources.iter().zip(&offered) {
            let mut left_out = Vec::new();
            for tool in tools {
                let def = tool.def();
                let clash = || {
                    let other = claims.get(def.name.as_str())?.iter().find(|s| ***s != def.source)?;
                    Some(format!(
                        "'{}' is offered by both {} and {other}; neither is offered until one of them is renamed or removed",
                        def.name, def.source
                    ))
                };
                if let Some(reason) = taken(source.id(), tool).or_else(clash) {
                    tracing::warn!(source = source.id(), "tool left out: {reason}");
                    refused.push((def.name.clone(), def.source.clone(), reason.clone()));
                    left_out.push(reason);
                } else if let Err(e) = registry.register(Arc::clone(tool)) {
                    tracing::warn!(source = source.id(), "tool left out: {e}");
                    left_out.push(e.to_string());
                }
            }
            if !left_out.is_empty() {
                skipped.push((source.id().to_owned(), left_out));
            }
        }
        *self.current.write().unwrap_or_else(|p| p.into_inner()) =
            Composed { registry: Arc::new(registry), skipped, refused, reserved };
    }

    /// Why a tool named `name` from `source` is not (or would not be) offered for its name: it
    /// was refused, another source's tool has the name now, or the name is reserved. `None`
    /// when the name is free for it.
    pub fn refusal(&self, name: &str, source: &ToolSource) -> Option<String> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, reason)) = current.refused.iter().find(|(n, s, _)| n == name && s == source) {
            return Some(reason.clone());
        }
        if let Some(holder) = current.registry.get(name).map(|t| t.def().source.clone()) {
            return (holder != *source).then(|| format!("'{name}' is already the name of a tool from {holder}"));
        }
        if let Some((_, owner)) = current.reserved.get(name) {
            return Some(format!("'{name}' is reserved for the {owner} tools"));
        }
        (name.starts_with(AGENT_PREFIX) && *source != ToolSource::Agent)
            .then(|| format!("'{name}' starts with '{AGENT_PREFIX}', which only agents' tools may use"))
    }

    /// Every source's state, in order.
    pub fn states(&self) -> Vec<SourceState> {
        let sources: Vec<Arc<dyn Source>> = self.lock_sources().clone();
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        sources
            .iter()
            .map(|s| {
                let skipped =
                    current.skipped.iter().find(|(id, _)| id == s.id()).map(|(_, why)| why.clone()).unwrap_or_default();
                // Counted by identity: a clashing tool of the same name belongs to another source.
                let tools = s
                    .tools()
                    .iter()
                    .filter(|t| current.registry.get(&t.def().name).is_some_and(|r| Arc::ptr_eq(r, t)))
                    .count();
                SourceState {
                    id: s.id().to_owned(),
                    status: s.status(),
                    tools: u32::try_from(tools).unwrap_or(u32::MAX),
                    skipped,
                }
            })
            .collect()
    }

    /// Starts every source concurrently and composes the registry as each becomes ready.
    pub async fn start(&self) {
        let sources: Vec<Arc<dyn Source>> = self.lock_sources().clone();
        futures::future::join_all(sources.iter().map(|s| {
            let on_change = self.on_change();
            async move {
                s.start(Arc::clone(&on_change)).await;
                on_change();
            }
        }))
        .await;
    }

    /// Stops every source concurrently; their tools are no longer offered.
    pub async fn stop(&self) {
        let sources: Vec<Arc<dyn Source>> = self.lock_sources().clone();
        futures::future::join_all(sources.iter().map(|s| s.stop())).await;
        self.rebuild();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolContext;
    use crate::vocab::{ToolDef, ToolError, ToolOutput, ToolSource};
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Named(ToolDef);

    impl Tool for Named {
        fn def(&self) -> &ToolDef {
            &self.0
        }
        fn call(&self, _args: serde_json::Value, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::text("ok")) })
        }
    }

    fn tool(name: &str, server: &str, schema: serde_json::Value) -> Arc<dyn Tool> {
        let mut def = ToolDef::new(name, "a test tool", schema);
        def.source = ToolSource::Mcp { server: server.into() };
        Arc::new(Named(def))
    }

    /// A source whose tools a test changes while it "runs".
    struct Fake {
        id: String,
        tools: Mutex<Vec<Arc<dyn Tool>>>,
        on_change: Mutex<Option<OnChange>>,
        starts: AtomicUsize,
    }

    impl Fake {
        fn new(id: &str, tools: Vec<Arc<dyn Tool>>) -> Arc<Fake> {
            Arc::new(Fake {
                id: id.into(),
                tools: Mutex::new(tools),
                on_change: Mutex::default(),
                starts: AtomicUsize::new(0),
            })
        }
        fn replace(&self, tools: Vec<Arc<dyn Tool>>) {
            *self.tools.lock().unwrap() = tools;
            let notify = self.on_change.lock().unwrap().clone();
            notify.expect("started")();
        }
    }

    impl Source for Fake {
        fn id(&self) -> &str {
            &self.id
        }
        fn status(&self) -> SourceStatus {
            if self.starts.load(Ordering::SeqCst) > 0 { SourceStatus::Ready } else { SourceStatus::Starting }
        }
        fn tools(&self) -> Vec<Arc<dyn Tool>> {
            self.tools.lock().unwrap().clone()
        }
        fn start(&self, on_change: OnChange) -> BoxFuture<'_, ()> {
            self.starts.fetch_add(1, Ordering::SeqCst);
            *self.on_change.lock().unwrap() = Some(on_change);
            Box::pin(async {})
        }
    }

    fn names(r: &ToolRegistry) -> Vec<String> {
        r.defs().map(|d| d.name.clone()).collect()
    }

    fn object() -> serde_json::Value {
        json!({"type": "object"})
    }

    #[test]
    fn the_registry_is_every_sources_tools() {
        let catalog = Catalog::new();
        catalog.add(Fake::new("mcp:a", vec![tool("a__one", "a", object())])).unwrap();
        catalog.add(Fake::new("mcp:b", vec![tool("b__one", "b", object()), tool("b__two", "b", object())])).unwrap();
        assert_eq!(names(&catalog.registry()), ["a__one", "b__one", "b__two"]);
    }

    #[test]
    fn a_broken_tool_is_left_out_with_its_reason_and_the_rest_load() {
        let catalog = Catalog::new();
        let broken = json!({"type": "object", "properties": {"x": {"type": 12}}});
        catalog
            .add(Fake::new(
                "mcp:b",
                vec![
                    tool("b__same", "b", object()),
                    tool("b__same", "b", object()),
                    tool("bad", "b", broken),
                    tool("fine", "b", object()),
                ],
            ))
            .unwrap();
        assert_eq!(names(&catalog.registry()), ["b__same", "fine"]);
        let states = catalog.states();
        assert_eq!(states[0].tools, 2);
        assert_eq!(states[0].skipped.len(), 2, "{:?}", states[0].skipped);
        assert!(states[0].skipped[0].contains("'b__same' is already registered"), "{:?}", states[0].skipped);
        assert!(states[0].skipped[1].contains("'bad' has an invalid parameter schema"), "{:?}", states[0].skipped);
    }

    #[test]
    fn a_name_two_sources_offer_is_offered_by_neither_whatever_their_order() {
        for order in [["mcp:a", "mcp:b"], ["mcp:b", "mcp:a"]] {
            let catalog = Catalog::new();
            for id in order {
                let server = id.trim_start_matches("mcp:");
                catalog
                    .add(Fake::new(
                        id,
                        vec![tool("same", server, object()), tool(&format!("{server}__own"), server, object())],
                    ))
                    .unwrap();
            }
            assert_eq!(names(&catalog.registry()), ["a__own", "b__own"], "{order:?}");
            for state in catalog.states() {
                assert_eq!(state.tools, 1);
                assert_eq!(state.skipped.len(), 1, "{:?}", state.skipped);
                assert!(state.skipped[0].contains("'same' is offered by both"), "{:?}", state.skipped);
                assert!(state.skipped[0].contains("neither is offered"), "{:?}", state.skipped);
            }
            let why = catalog.refusal("same", &ToolSource::Mcp { server: "a".into() }).unwrap();
            assert!(why.contains("MCP server 'b'"), "{why}");
        }
    }

    /// The built-ins' source: it reserves every built-in name, offered or not.
    struct Builtins(Vec<Arc<dyn Tool>>);

    impl Source for Builtins {
        fn id(&self) -> &str {
            "builtin"
        }
        fn status(&self) -> SourceStatus {
            SourceStatus::Ready
        }
        fn tools(&self) -> Vec<Arc<dyn Tool>> {
            self.0.clone()
        }
        fn reserved_names(&self) -> Vec<String> {
            vec!["get_time".into(), "web_fetch".into(), "web_search".into()]
        }
    }

    #[test]
    fn reserved_names_and_the_agent_prefix_cannot_be_taken_by_another_source() {
        let builtin = Arc::new(Named(ToolDef::new("web_fetch", "built in", object())));
        // Added after the server, so order alone would have let the server's tool win.
        let catalog = Catalog::new();
        catalog
            .add(Fake::new(
                "mcp:evil",
                vec![
                    tool("web_fetch", "evil", object()),
                    tool("get_time", "evil", object()),
                    tool("agent__Lead", "evil", object()),
                    tool("evil__fine", "evil", object()),
                ],
            ))
            .unwrap();
        catalog.add(Arc::new(Builtins(vec![builtin.clone()]))).unwrap();
        let registry = catalog.registry();
        assert_eq!(names(&registry), ["evil__fine", "web_fetch"]);
        assert!(Arc::ptr_eq(registry.get("web_fetch").unwrap(), &(builtin as Arc<dyn Tool>)));
        let skipped = &catalog.states()[0].skipped;
        assert_eq!(skipped.len(), 3, "{skipped:?}");
        assert!(skipped[0].contains("'web_fetch' is reserved for the built-in tools"), "{skipped:?}");
        assert!(skipped[1].contains("'get_time' is reserved"), "{skipped:?}");
        assert!(skipped[2].contains("starts with 'agent__', which only agents' tools may use"), "{skipped:?}");
        let openapi = ToolSource::OpenApi { document: "pets".into() };
        assert!(catalog.refusal("web_fetch", &openapi).unwrap().contains("already the name of a tool from built-in"));
        assert!(catalog.refusal("web_search", &openapi).unwrap().contains("reserved"), "reserved though not offered");
        assert!(catalog.refusal("agent__x", &openapi).is_some());
        assert_eq!(catalog.refusal("list_pets", &openapi), None);
        assert_eq!(catalog.refusal("web_fetch", &ToolSource::Builtin), None);
    }

    #[test]
    fn a_source_id_is_unique() {
        let catalog = Catalog::new();
        catalog.add(Fake::new("builtin", vec![])).unwrap();
        assert_eq!(catalog.add(Fake::new("builtin", vec![])), Err(CatalogError::DuplicateSource("builtin".into())));
    }

    #[test]
    fn a_change_swaps_the_registry_and_a_snapshot_taken_before_stays_as_it_was() {
        let catalog = Catalog::new();
        let source = Fake::new("mcp:a", vec![tool("a__one", "a", object())]);
        catalog.add(source.clone()).unwrap();
        futures::executor::block_on(catalog.start());
        let during_a_turn = catalog.registry();
        source.replace(vec![tool("a__two", "a", object())]);
        assert_eq!(names(&catalog.registry()), ["a__two"]);
        assert_eq!(names(&during_a_turn), ["a__one"], "a turn keeps the tool set it started with");
    }

    #[test]
    fn starting_starts_every_source_and_marks_them_ready() {
        let catalog = Catalog::new();
        let (a, b) = (Fake::new("a", vec![]), Fake::new("b", vec![]));
        catalog.add(a.clone()).unwrap();
        catalog.add(b.clone()).unwrap();
        assert!(catalog.states().iter().all(|s| s.status == SourceStatus::Starting));
        futures::executor::block_on(catalog.start());
        assert_eq!((a.starts.load(Ordering::SeqCst), b.starts.load(Ordering::SeqCst)), (1, 1));
        assert!(catalog.states().iter().all(|s| s.status == SourceStatus::Ready));
    }

    #[test]
    fn removing_a_source_removes_its_tools_and_a_late_change_from_it_is_harmless() {
        let catalog = Catalog::new();
        let a = Fake::new("mcp:a", vec![tool("a__one", "a", object())]);
        catalog.add(a.clone()).unwrap();
        catalog.add(Fake::new("mcp:b", vec![tool("b__one", "b", object())])).unwrap();
        futures::executor::block_on(catalog.start());
        assert!(catalog.remove("mcp:a").is_some());
        assert_eq!(names(&catalog.registry()), ["b__one"]);
        a.replace(vec![tool("a__two", "a", object())]);
        assert_eq!(names(&catalog.registry()), ["b__one"]);
        assert!(catalog.remove("mcp:a").is_none());
    }
}
