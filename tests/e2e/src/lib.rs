//! The harness shared by the desktop end-to-end tests (`tests/`) and the desktop benchmarks
//! (`benches/desktop.rs`): it drives the REAL app binary over WebDriver.
//!
//! ```text
//! test ──fantoccini──> tauri-driver (--port P) ──> WebKitWebDriver (--native-port N)
//!                                                    └─ launches target/<profile>/switchboard-desktop
//!                                                         └─ WebKitWebProcess, WebKitNetworkProcess
//! ```
//!
//! Every run gets a throwaway data directory ([`DataDir`]) whose database already holds a provider
//! profile pointing at an in-process `switchboard_mock_provider::MockServer`, so nothing touches the
//! internet. tauri-driver is started with `SWITCHBOARD_DATA_DIR` (and private `XDG_*` folders, so
//! WebKit's local storage and the window-state plugin never leak between runs) in its environment;
//! the app inherits it. A new WebDriver session is a new app process; ending it makes the app exit.
//!
//! Cleanup never depends on the test passing: [`Driver`] starts tauri-driver in its own process
//! group and kills the whole group (driver, WebKitWebDriver, app, WebKit helpers) when dropped.
//!
//! Prerequisites ([`Prereqs::find`]): a display (`DISPLAY` or `WAYLAND_DISPLAY`), `tauri-driver`,
//! `WebKitWebDriver` and the built app. Missing ones make a test skip with the reason printed,
//! or fail when `SWITCHBOARD_E2E=1` (CI sets it and runs under `xvfb-run`).

use anyhow::{Context, Result, anyhow, bail};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_store::{ProviderProfile, Store};

/// Set to `1` to turn missing prerequisites into failures instead of skips.
pub const E2E_ENV: &str = "SWITCHBOARD_E2E";
/// Overrides the app binary (default: `<target>/debug/switchboard-desktop`).
pub const APP_ENV: &str = "SWITCHBOARD_APP";
/// Overrides the tauri-driver executable (default: `<repo>/node_modules/.bin/tauri-driver`, then `PATH`).
pub const TAURI_DRIVER_ENV: &str = "TAURI_DRIVER";
/// Overrides the native WebDriver (default: `WebKitWebDriver` on `PATH`).
pub const NATIVE_DRIVER_ENV: &str = "WEBKIT_WEBDRIVER";

/// The provider profile every run configures.
pub const PROVIDER: &str = "mock";
/// Its model.
pub const MODEL: &str = "mock-model";

/// The repository root (two levels above this crate).
/// An async script: resolves once the element `arguments[0]` has kept its box over four frames in
/// a row (at most 2 s; a control that never settles, an animated one, is clicked anyway).
const SETTLED: &str = r#"
const [css, done] = arguments;
const box = () => { const el = document.querySelector(css); if (!el) return ''; const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(); };
let last = box(), same = 0;
const until = performance.now() + 2000;
const tick = () => {
  const now = box();
  same = now === last ? same + 1 : 0;
  last = now;
  if (same >= 4 || performance.now() > until) done(true); else requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
"#;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// `tests/artifacts/e2e`, where screenshots go (gitignored).
pub fn artifacts_dir() -> PathBuf {
    repo_root().join("tests/artifacts/e2e")
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, else the folder above `<profile>/deps` that
/// holds the running test or bench executable, else `<repo>/target`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.is_absolute() { dir } else { repo_root().join(dir) };
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(deps) = exe.ancestors().find(|a| a.file_name().is_some_and(|n| n == "deps"))
        && let Some(target) = deps.parent().and_then(Path::parent)
    {
        return target.to_owned();
    }
    repo_root().join("target")
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Whether `SWITCHBOARD_E2E=1`.
pub fn required() -> bool {
    std::env::var(E2E_ENV).is_ok_and(|v| v == "1")
}

/// What a run needs, found on this machine.
#[derive(Clone, Debug)]
pub struct Prereqs {
    /// The tauri-driver executable.
    pub tauri_driver: PathBuf,
    /// WebKitWebDriver.
    pub native_driver: PathBuf,
    /// The app binary.
    pub app: PathBuf,
}

impl Prereqs {
    /// Finds everything, or says what is missing (all of it, one reason per line).
    pub fn find() -> std::result::Result<Prereqs, String> {
        Self::find_app(env_path(APP_ENV).unwrap_or_else(|| target_dir().join("debug/switchboard-desktop")))
    }

    /// Like [`Prereqs::find`] with a given app binary.
    pub fn find_app(app: PathBuf) -> std::result::Result<Prereqs, String> {
        let mut missing = Vec::new();
        let display = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
        if !display {
            missing.push("no display: neither DISPLAY nor WAYLAND_DISPLAY is set (run under `xvfb-run -a`)".to_owned());
        }
        let tauri_driver = env_path(TAURI_DRIVER_ENV)
            .or_else(|| Some(repo_root().join("node_modules/.bin/tauri-driver")).filter(|p| is_executable(p)))
            .or_else(|| which("tauri-driver"));
        match &tauri_driver {
            Some(p) if is_executable(p) => {}
            Some(p) => missing.push(format!("tauri-driver at {} ({TAURI_DRIVER_ENV}) is not an executable", p.display())),
            None => missing.push(format!(
                "tauri-driver not found: add @crabnebula/tauri-driver to the root package.json devDependencies and run `npm ci`, or set {TAURI_DRIVER_ENV}"
            )),
        }
        let native_driver = env_path(NATIVE_DRIVER_ENV).or_else(|| which("WebKitWebDriver"));
        match &native_driver {
            Some(p) if is_executable(p) => {}
            Some(p) => missing.push(format!("{} ({NATIVE_DRIVER_ENV}) is not an executable", p.display())),
            None => missing.push(
                "WebKitWebDriver not found on PATH: install the Debian/Ubuntu package `webkit2gtk-driver`, or set WEBKIT_WEBDRIVER".to_owned(),
            ),
        }
        if !is_executable(&app) {
            missing.push(format!(
                "the app binary {} does not exist: run `npm run build && cargo build -p switchboard-desktop` (or set {APP_ENV})",
                app.display()
            ));
        }
        if !missing.is_empty() {
            return Err(missing.join("\n  - "));
        }
        let app = app.canonicalize().unwrap_or(app);
        warn_if_stale(&app);
        Ok(Prereqs {
            tauri_driver: tauri_driver.unwrap_or_default(),
            native_driver: native_driver.unwrap_or_default(),
            app,
        })
    }

    /// The prerequisites, or `None` after printing why the test `name` is skipped. Panics instead
    /// when `SWITCHBOARD_E2E=1`.
    pub fn require(name: &str) -> Option<Prereqs> {
        match Self::find() {
            Ok(p) => Some(p),
            Err(why) if required() => {
                panic!("{name}: the desktop end-to-end prerequisites are missing ({E2E_ENV}=1):\n  - {why}")
            }
            Err(why) => {
                eprintln!(
                    "SKIPPED {name}: desktop end-to-end prerequisites are missing (set {E2E_ENV}=1 to fail instead):\n  - {why}"
                );
                None
            }
        }
    }
}

/// The app embeds `ui/dist` when it is compiled: an app older than the UI build runs old UI code.
fn warn_if_stale(app: &Path) {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(app_time), Some(ui_time)) = (modified(app), modified(&repo_root().join("ui/dist/index.html")))
        && ui_time > app_time
    {
        eprintln!(
            "warning: ui/dist is newer than {}: the app embeds the UI at compile time; rebuild it (cargo build -p switchboard-desktop)",
            app.display()
        );
    }
}

// ----- data directory -------------------------------------------------------------------------

/// A throwaway data directory: `switchboard.db` with the mock provider as the default profile,
/// titles from the first line, plus private XDG folders for WebKit and the window-state plugin. Deleted on drop unless
/// `SWITCHBOARD_E2E_KEEP=1`.
#[derive(Debug)]
pub struct DataDir {
    dir: tempfile::TempDir,
    /// Whether the app sees a (fake) `OPENAI_API_KEY` in its environment.
    env_key: bool,
    /// More variables for the app (a scenario's own PATH, HOME, SHELL).
    extra_env: Vec<(&'static str, OsString)>,
}

impl DataDir {
    /// Creates it with a provider profile at `base_url` (a `MockServer::base_url()`).
    pub fn new(base_url: &str) -> Result<DataDir> {
        let dir = tempfile::Builder::new().prefix("switchboard-e2e-").tempdir().context("temp data dir")?;
        let this = DataDir { dir, env_key: true, extra_env: Vec::new() };
        this.add_provider(PROVIDER, base_url, MODEL)?;
        let store = this.open_store()?;
        store.set_setting("defaultProvider", PROVIDER)?;
        // Scripted scenarios count the mock's requests; a generated title would be one more.
        // (The onboarding scenario, on an empty directory, keeps the default and checks it.)
        store.set_setting("chats", &json!({ "titles": "firstLine" }))?;
        Ok(this)
    }

    /// Creates it with no provider at all and no key in the environment: the app as a new user
    /// first meets it.
    pub fn empty() -> Result<DataDir> {
        let dir = tempfile::Builder::new().prefix("switchboard-e2e-").tempdir().context("temp data dir")?;
        let this = DataDir { dir, env_key: false, extra_env: Vec::new() };
        this.open_store()?;
        Ok(this)
    }

    /// Adds an OpenAI-compatible provider profile `name` at `base_url` with `model`.
    pub fn add_provider(&self, name: &str, base_url: &str, model: &str) -> Result<()> {
        self.open_store()?.upsert_provider(&ProviderProfile {
            name: name.to_owned(),
            kind: "openai".to_owned(),
            base_url: base_url.to_owned(),
            model: Some(model.to_owned()),
            options: Default::default(),
        })?;
        Ok(())
    }

    /// The folder (`SWITCHBOARD_DATA_DIR`).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The database file.
    pub fn db(&self) -> PathBuf {
        self.path().join(switchboard_store::DB_FILE)
    }

    /// Opens the app's database (best after the app exited, though WAL allows it anytime).
    pub fn open_store(&self) -> Result<Store> {
        Store::open(&self.db()).with_context(|| format!("opening {}", self.db().display()))
    }

    /// Configures an MCP server as if the person had added it and allowed its command: its entry
    /// in `mcp.json` (the config directory is the data directory the tests choose) and its
    /// command line's fingerprint among the approvals in the database.
    pub fn add_mcp_server(&self, name: &str, config: switchboard_mcp::ServerConfig) -> Result<()> {
        let path = self.path().join(switchboard_mcp::config::CONFIG_FILE);
        let mut file = switchboard_mcp::McpConfig::load(&path)?;
        let fingerprint = config.command_fingerprint();
        file.mcp_servers.insert(name.to_owned(), config);
        file.save(&path)?;
        let store = self.open_store()?;
        let mut trust: Value = store.setting("mcp.trust")?.unwrap_or_else(|| json!({}));
        trust[name] = json!({ "command": fingerprint, "tools": {} });
        store.set_setting("mcp.trust", &trust)?;
        Ok(())
    }

    /// The environment tauri-driver (and so the app) runs with; a test that starts the app itself
    /// gives it the same.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let p = self.path();
        let mut env = vec![
            (switchboard_store::DATA_DIR_ENV, p.as_os_str().to_owned()),
            ("XDG_DATA_HOME", p.join("xdg/data").into_os_string()),
            ("XDG_CONFIG_HOME", p.join("xdg/config").into_os_string()),
            ("XDG_CACHE_HOME", p.join("xdg/cache").into_os_string()),
        ];
        if self.env_key {
            // Tests never touch the internet and never see a real key.
            env.push(("OPENAI_API_KEY", "sk-e2e-test".into()));
        }
        env.extend(self.extra_env.iter().cloned());
        env
    }

    /// The app (and tauri-driver, which starts it) gets `name=value` too, over the test's own.
    pub fn set_env(&mut self, name: &'static str, value: impl Into<OsString>) {
        self.extra_env.push((name, value.into()));
    }

    /// Variables the app must not inherit from the machine running the tests.
    pub fn env_removed(&self) -> Vec<&'static str> {
        if self.env_key { Vec::new() } else { vec!["OPENAI_API_KEY"] }
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if std::env::var("SWITCHBOARD_E2E_KEEP").is_ok_and(|v| v == "1") {
            self.dir.disable_cleanup(true);
            eprintln!("kept data dir {}", self.dir.path().display());
        }
    }
}

// ----- processes ------------------------------------------------------------------------------

/// A free local TCP port (bound then released; good enough on a test machine).
pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Parent pid and state of a process, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, char, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: parse after the last ')'.
    let rest = &s[s.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    // Field 22 of the full line (starttime, clock ticks since boot) is index 19 after the name.
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, state, start))
}

/// Every live (not zombie) descendant of `root`, `root` excluded, parents before children.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut all = Vec::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for e in entries.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok())
                && let Some((ppid, state, _)) = stat(pid)
                && state != 'Z'
                && state != 'X'
            {
                all.push((pid, ppid));
            }
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in &all {
            if ppid == parent {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    out
}

/// The executable of a process.
pub fn exe(pid: u32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// Seconds since boot when the process started (10 ms resolution).
pub fn start_secs(pid: u32) -> Option<f64> {
    let ticks = stat(pid)?.2 as f64;
    Some(ticks / 100.0)
}

/// Seconds since boot now (`/proc/uptime`, 10 ms resolution).
pub fn uptime_secs() -> Option<f64> {
    fs::read_to_string("/proc/uptime").ok()?.split_whitespace().next()?.parse().ok()
}

/// Memory of one process in KiB: (PSS, RSS).
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let field = |text: &str, name: &str| -> Option<u64> {
        text.lines().find(|l| l.starts_with(name))?.split_whitespace().nth(1)?.parse().ok()
    };
    let rollup = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some((field(&rollup, "Pss:")?, field(&status, "VmRSS:")?))
}

/// Short name of a process (`/proc/<pid>/comm`).
pub fn comm(pid: u32) -> String {
    fs::read_to_string(format!("/proc/{pid}/comm")).map(|s| s.trim().to_owned()).unwrap_or_default()
}

fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// A running tauri-driver (own process group) for one data directory. Dropping it kills the
/// group: tauri-driver, WebKitWebDriver, the app and its WebKit processes.
#[derive(Debug)]
pub struct Driver {
    child: Child,
    port: u16,
    app: PathBuf,
    log: PathBuf,
}

impl Driver {
    /// Starts tauri-driver on free ports and waits until it accepts connections.
    pub async fn start(pre: &Prereqs, data: &DataDir) -> Result<Driver> {
        let port = free_port()?;
        let native_port = loop {
            let p = free_port()?;
            if p != port {
                break p;
            }
        };
        let log = data.path().join("tauri-driver.log");
        let out = fs::File::create(&log).context("tauri-driver log")?;
        let mut cmd = Command::new(&pre.tauri_driver);
        cmd.arg("--port")
            .arg(port.to_string())
            .arg("--native-port")
            .arg(native_port.to_string())
            .arg("--native-driver")
            .arg(&pre.native_driver)
            .envs(data.env())
            .env_remove("SWITCHBOARD_KEY_MOCK")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0);
        for name in data.env_removed() {
            cmd.env_remove(name);
        }
        let child = cmd.spawn().with_context(|| format!("starting {}", pre.tauri_driver.display()))?;
        let mut driver = Driver { child, port, app: pre.app.clone(), log };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(driver);
            }
            if let Some(status) = driver.child.try_wait()? {
                bail!("tauri-driver exited ({status}) before listening:\n{}", driver.log_tail());
            }
            if Instant::now() > deadline {
                bail!("tauri-driver did not listen on port {port} within 30 s:\n{}", driver.log_tail());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// tauri-driver's pid (also its process group).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines tauri-driver (and WebKitWebDriver, and the app's stderr) wrote.
    pub fn log_tail(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut s);
        }
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Live app processes under this driver.
    pub fn app_pids(&self) -> Vec<u32> {
        descendants(self.pid()).into_iter().filter(|&p| exe(p).is_some_and(|e| e == self.app)).collect()
    }

    /// Starts the app (a new WebDriver session) and waits for the composer. Screenshots are
    /// named `<scenario>-<step>.png`.
    pub async fn launch(&self, scenario: &str) -> Result<App> {
        let app = self.connect(scenario).await?;
        app.ensure_embedded_ui().await?;
        app.wait_composer_ready(Duration::from_secs(30)).await?;
        Ok(app)
    }

    /// Starts the app (a new WebDriver session) without waiting for anything.
    pub async fn connect(&self, scenario: &str) -> Result<App> {
        let before = self.app_pids();
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("wry"));
        caps.insert("tauri:options".into(), json!({ "application": self.app }));
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .map_err(|e| {
                anyhow!("new WebDriver session (launching {}): {e}\n{}", self.app.display(), self.log_tail())
            })?;
        let pid = self.app_pids().into_iter().find(|p| !before.contains(p));
        Ok(App {
            client: Some(client),
            pid,
            scenario: scenario.to_owned(),
            artifacts: artifacts_dir(),
            log: self.log.clone(),
        })
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let pgid = self.child.id();
        signal_group(pgid, "-TERM");
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Whatever is left of the group (the app, WebKit helpers) goes now.
        signal_group(pgid, "-KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ----- the app under test --------------------------------------------------------------------

/// One app process driven over a WebDriver session. End it with [`App::close`] (the app exits);
/// a panic skips that and the [`Driver`]'s drop kills everything instead.
#[derive(Debug)]
pub struct App {
    client: Option<Client>,
    /// The app's pid, when it could be found.
    pub pid: Option<u32>,
    scenario: String,
    artifacts: PathBuf,
    log: PathBuf,
}

/// A CSS selector for a `data-testid`.
pub fn tid(id: &str) -> String {
    format!("[data-testid=\"{id}\"]")
}

impl App {
    /// The WebDriver client.
    pub fn client(&self) -> &Client {
        self.client.as_ref().expect("session open")
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Result<Value> {
        self.client().execute(script, args).await.map_err(|e| anyhow!("script failed: {e}\n--- script ---\n{script}"))
    }

    /// Runs an async script: it must call `arguments[arguments.length - 1](result)`.
    pub async fn js_async(&self, script: &str, args: Vec<Value>) -> Result<Value> {
        self.client()
            .execute_async(script, args)
            .await
            .map_err(|e| anyhow!("async script failed: {e}\n--- script ---\n{script}"))
    }

    /// Polls `script` until it returns something other than `null`, `false`, `0` or `""`, and
    /// returns that. On timeout: a `<scenario>-timeout` screenshot and an error naming `what`.
    pub async fn wait_for(&self, what: &str, script: &str, timeout: Duration) -> Result<Value> {
        let deadline = Instant::now() + timeout;
        let mut last_err = None;
        loop {
            match self.js(script, vec![]).await {
                Ok(v) if truthy(&v) => return Ok(v),
                Ok(_) => {}
                Err(e) => last_err = Some(e),
            }
            if Instant::now() > deadline {
                let shot = self.screenshot("timeout").await.map(|p| p.display().to_string()).unwrap_or_default();
                let summary = self.dom_summary().await.unwrap_or_default();
                bail!(
                    "timed out after {timeout:?} waiting for {what} (screenshot: {shot})\nlast script error: {}\npage: {summary}",
                    last_err.map(|e| e.to_string()).unwrap_or_else(|| "none".into())
                );
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    /// Fails when the app loads the dev server (`devUrl`) instead of the UI embedded from
    /// `ui/dist`: a build without Tauri's `custom-protocol` feature shows whatever `npm run dev`
    /// serves (or "Could not connect"), which is not the app that ships.
    pub async fn ensure_embedded_ui(&self) -> Result<()> {
        let href = self.js("return location.href;", vec![]).await?;
        let href = href.as_str().unwrap_or_default();
        if href.starts_with("http://localhost") || href.starts_with("http://127.0.0.1") {
            bail!(
                "the app loads {href} (the dev server), not the UI embedded from ui/dist: it was built without \
                 Tauri's custom-protocol feature (e.g. with --no-default-features). Build it with \
                 `npm run build && cargo build -p switchboard-desktop` (scripts/e2e.sh does)."
            );
        }
        Ok(())
    }

    /// Waits for `composer-input` to be present and enabled.
    pub async fn wait_composer_ready(&self, timeout: Duration) -> Result<()> {
        self.wait_for(
            "an enabled composer-input",
            &format!("const el = document.querySelector('{}'); return !!el && !el.disabled;", tid("composer-input")),
            timeout,
        )
        .await
        .map(drop)
    }

    /// Clicks the element matching `css` (a real WebDriver click), once it has stopped moving: a
    /// click lands at a point, and a control that a late layout change moves (a label that grew,
    /// a row that wrapped) would leave the click on whatever took its place.
    pub async fn click(&self, css: &str) -> Result<()> {
        self.js_async(SETTLED, vec![json!(css)]).await.with_context(|| format!("waiting for {css} to stop moving"))?;
        let el = self.client().find(Locator::Css(css)).await.with_context(|| format!("finding {css}"))?;
        el.click().await.with_context(|| format!("clicking {css}"))
    }

    /// Waits for `css` to exist, then clicks it.
    pub async fn wait_and_click(&self, css: &str, timeout: Duration) -> Result<()> {
        self.wait_for(
            &format!("{css} to appear"),
            &format!("return !!document.querySelector({});", js_str(css)),
            timeout,
        )
        .await?;
        self.click(css).await
    }

    /// Sends real key events to whatever has focus (`Key::Control + "k"` is a chord).
    pub async fn keys(&self, keys: &str) -> Result<()> {
        let el = self.client().active_element().await.context("the focused element")?;
        el.send_keys(keys).await.with_context(|| format!("sending keys {keys:?}"))
    }

    /// The `data-testid` of the focused element, if it has one.
    pub async fn focused_testid(&self) -> Result<Option<String>> {
        let v =
            self.js("return document.activeElement && document.activeElement.dataset.testid || null;", vec![]).await?;
        Ok(v.as_str().map(str::to_owned))
    }

    /// Types into the composer (real key events) and clicks send.
    pub async fn send_message(&self, text: &str) -> Result<()> {
        self.wait_composer_ready(Duration::from_secs(15)).await?;
        let input = self.client().find(Locator::Css(&tid("composer-input"))).await?;
        input.click().await?;
        input.send_keys(text).await.context("typing into composer-input")?;
        self.wait_for(
            "send-button to be enabled",
            &format!("const b = document.querySelector('{}'); return !!b && !b.disabled;", tid("send-button")),
            Duration::from_secs(5),
        )
        .await?;
        self.click(&tid("send-button")).await
    }

    /// Saves a screenshot to `tests/artifacts/e2e/<scenario>-<step>.png`.
    pub async fn screenshot(&self, step: &str) -> Result<PathBuf> {
        // WebKit snapshots what was last painted: let the latest DOM changes reach the screen.
        self.painted().await?;
        // Without compositing (what the app chooses on a machine with no GPU, like CI's) WebKit
        // answers a snapshot after the next paint, and an idle page never paints: a one-pixel,
        // practically transparent ticker keeps frames coming until the snapshot is taken.
        self.js(TICKER_START_JS, vec![]).await?;
        let png = self.client().screenshot().await.context("WebDriver screenshot");
        self.js(TICKER_STOP_JS, vec![]).await?;
        let png = png?;
        fs::create_dir_all(&self.artifacts)?;
        let path = self.artifacts.join(format!("{}-{step}.png", self.scenario));
        fs::write(&path, png)?;
        Ok(path)
    }

    /// Resolves after two animation frames: every DOM change made before the call has been
    /// through a rendering update.
    pub async fn painted(&self) -> Result<()> {
        self.js_async(
            "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
            vec![],
        )
        .await
        .map(drop)
    }

    /// Every message on screen with its parts in DOM order (see [`Transcript`]).
    pub async fn transcript(&self) -> Result<Transcript> {
        let v = self.js(TRANSCRIPT_JS, vec![]).await?;
        serde_json::from_value(v.clone()).map_err(|e| anyhow!("unexpected transcript {v}: {e}"))
    }

    /// A short description of the page for error messages.
    pub async fn dom_summary(&self) -> Result<String> {
        let v = self
            .js(
                "return JSON.stringify({ text: document.body.innerText.slice(0, 600), messages: \
                 [...document.querySelectorAll('[data-testid=\"message\"]')].map(m => m.dataset.role + ':' + m.dataset.status) });",
                vec![],
            )
            .await?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }

    /// Ends the session (the app exits) and waits up to 15 s for the app process to be gone.
    pub async fn close(mut self) -> Result<()> {
        let client = self.client.take().expect("session open");
        client.close().await.map_err(|e| anyhow!("ending the WebDriver session: {e}"))?;
        if let Some(pid) = self.pid {
            let deadline = Instant::now() + Duration::from_secs(15);
            while stat(pid).is_some_and(|(_, state, _)| state != 'Z' && state != 'X') {
                if Instant::now() > deadline {
                    bail!(
                        "the app (pid {pid}) did not exit within 15 s of the session ending; log: {}",
                        self.log.display()
                    );
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Ok(())
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// A JavaScript string literal.
pub fn js_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The messages on screen, as data: what the restart scenario compares.
pub type Transcript = Vec<ShownMessage>;

/// One message on screen.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct ShownMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// `data-status`.
    pub status: String,
    /// Text runs and tool cards in DOM order.
    pub parts: Vec<Part>,
    /// The error callout's text, if any.
    pub error: Option<String>,
}

/// A text run (`message-text`, its `innerText` trimmed) or a tool card.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Part {
    /// Text.
    Text {
        /// Trimmed `innerText`.
        text: String,
    },
    /// A tool card.
    Card {
        /// `data-tool-name`.
        name: String,
        /// `data-status`.
        status: String,
        /// `data-offset`.
        offset: String,
    },
}

impl ShownMessage {
    /// All text runs joined (trimmed runs, separated by a newline).
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } if !text.is_empty() => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The text before the first tool card.
    pub fn text_before_first_card(&self) -> String {
        let mut out = Vec::new();
        for p in &self.parts {
            match p {
                Part::Text { text } if !text.is_empty() => out.push(text.as_str()),
                Part::Card { .. } => break,
                Part::Text { .. } => {}
            }
        }
        out.join("\n")
    }

    /// The tool cards.
    pub fn cards(&self) -> Vec<(&str, &str, &str)> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Card { name, status, offset } => Some((name.as_str(), status.as_str(), offset.as_str())),
                Part::Text { .. } => None,
            })
            .collect()
    }
}

const TRANSCRIPT_JS: &str = r#"
return [...document.querySelectorAll('[data-testid="message"]')].map((m) => ({
  role: m.dataset.role,
  status: m.dataset.status,
  parts: [...m.querySelectorAll('[data-testid="message-text"], [data-testid="tool-card"]')].map((el) =>
    el.dataset.testid === 'tool-card'
      ? { kind: 'card', name: el.dataset.toolName, status: el.dataset.status, offset: el.dataset.offset }
      : { kind: 'text', text: el.innerText.trim() }),
  // The error callout's words (its buttons, such as Retry on the latest answer only, left out).
  error: (() => {
    const e = m.querySelector('[role="alert"]');
    if (!e) return null;
    return [...e.children].filter((c) => c.tagName !== 'BUTTON').map((c) => (c.innerText ?? c.textContent ?? '').trim()).filter(Boolean).join('\n');
  })(),
}));
"#;

// ----- fixtures -------------------------------------------------------------------------------

/// Writes a conversation of `turns` question/answer pairs straight into the store, through the
/// same `Recorder` a live turn uses: each answer has text, one `get_time` card with its result,
/// and a Markdown paragraph after it. Returns the conversation id.
pub fn write_conversation(store: &Store, turns: usize) -> Result<String> {
    write_conversation_marked(store, turns, None)
}

/// [`write_conversation`], where the tool result of turn `marked.0` (1-based) also holds the
/// words `marked.1` (something to search for that is nowhere else).
pub fn write_conversation_marked(store: &Store, turns: usize, marked: Option<(usize, &str)>) -> Result<String> {
    use switchboard_core::{ChatEvent, EventSink, FinishReason, ToolSource, ToolStatus, Usage};
    let mut conversation: Option<String> = None;
    for i in 1..=turns {
        let question = format!("Question {i}: what time is it in Paris, and is that CET or CEST right now?");
        let rows = store.begin_turn(conversation.as_deref(), &question, PROVIDER, MODEL)?;
        conversation.get_or_insert(rows.conversation_id.clone());
        let rec = store.recorder(&rows.message_id);
        let before = format!("Let me check the clock for question {i} — one moment ⏱️");
        let id = format!("call_{i}");
        rec.emit(ChatEvent::TextDelta { text: before.clone() });
        rec.emit(ChatEvent::ToolCall {
            id: id.clone(),
            name: "get_time".into(),
            source: ToolSource::Builtin,
            arguments: r#"{"timezone":"Europe/Paris"}"#.into(),
            text_offset: before.chars().count(),
            iteration: 1,
            index: 0,
        });
        rec.emit(ChatEvent::ToolStarted { id: id.clone() });
        let output = match marked {
            Some((turn, words)) if turn == i => format!(
                r#"{{"date":"2026-11-22","note":"{words}","time":"04:16:11","timezone":"Europe/Paris","utcOffset":"+01:00","weekday":"Sunday"}}"#
            ),
            _ => r#"{"date":"2026-11-22","iso":"2026-11-22T04:16:11+01:00","time":"04:16:11","timezone":"Europe/Paris","utcOffset":"+01:00","weekday":"Sunday"}"#.into(),
        };
        rec.emit(ChatEvent::ToolResult { id, status: ToolStatus::Ok, output, duration_ms: 1, images: None });
        rec.emit(ChatEvent::TextDelta {
            text: format!(
                "\n\nIn **Paris** it is `04:16` on Sunday (answer {i}).\n\n- The offset is `+01:00`, so this is *CET*.\n- Summer time (CEST, `+02:00`) starts on the last Sunday of March.\n\nAnything else?"
            ),
        });
        let usage = Usage { prompt_tokens: 120, completion_tokens: 60, ..Usage::default() };
        rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage, tool_calls_made: 1 });
        if let Some(e) = rec.take_error() {
            return Err(e.into());
        }
    }
    conversation.context("no turns written")
}

/// Starts a one-pixel ticker in the bottom-right corner that changes every animation frame (see
/// [`App::screenshot`]); stops by itself after 10 s if nothing stops it.
const TICKER_START_JS: &str = r#"
  const el = document.createElement('div');
  el.id = 'e2e-paint-ticker';
  el.style.cssText = 'position:fixed;right:0;bottom:0;width:1px;height:1px;pointer-events:none;z-index:2147483647';
  document.body.appendChild(el);
  const until = performance.now() + 10000;
  let odd = false;
  const tick = (now) => {
    if (!el.isConnected || now > until) { el.remove(); return; }
    odd = !odd;
    el.style.background = odd ? 'rgba(0,0,0,0.01)' : 'rgba(0,0,0,0.02)';
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return true;
"#;

/// Removes the ticker [`TICKER_START_JS`] started.
const TICKER_STOP_JS: &str = "document.getElementById('e2e-paint-ticker')?.remove(); return true;";
