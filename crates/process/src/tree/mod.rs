//! Process trees: every program Switchboard starts for a tool (a stdio MCP server, a command
//! tool) is the root of a tree, and nothing of a tree outlives the app or the CLI.
//!
//! What it owns: how a tool's child is spawned ([`Tree`], used by [`crate::group`]), the set of
//! live roots, the keeper thread children are forked from ([`spawn_on_keeper`]), and the end of
//! everything at exit ([`end_all`]) and between exits (the orphan reaper, Linux).
//!
//! Invariants:
//! - On Unix a tool's child leads its own session (and so its own process group): it has no
//!   controlling terminal, and neither it nor anything it starts can ever join the app's session
//!   or an opener's session again. On Linux, "a descendant of the app outside the app's own session
//!   and outside every opener's session" is therefore exactly "part of a tool tree", whatever
//!   it did (`setsid`, double fork, a new process group).
//! - On Linux the app is a child subreaper ([`install`]): an orphan of a tool tree becomes the
//!   app's child, never init's, so it is still found at exit; orphans that end are reaped by a
//!   thread of ours, and only those (never a child some other code waits for).
//! - A root forked from the keeper thread gets SIGKILL when the app dies however it dies
//!   (`PR_SET_PDEATHSIG`; the keeper thread never exits, so the signal cannot come early).
//! - When a root exits, what is left of its group (and, on Linux, of its session) is ended
//!   (SIGTERM, then SIGKILL a second later).
//! - At exit [`end_all`] ends every tool tree: SIGTERM, a short grace, SIGKILL, repeated until
//!   none is left or a few seconds have passed. The system opener ([`crate::open_external`])
//!   runs in a session of its own that is exempt: the person's browser outlives the app.
//! - Windows: every child is in a job object created with `KILL_ON_JOB_CLOSE`, so what is in
//!   the job ends when the app's handle to it closes, which the OS does when the app ends.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub(crate) use unix::{Spawning, opener_ended, opener_started};
#[cfg(unix)]
pub use unix::{Tree, TreeChild};

/// Makes `cmd` (the system opener) lead a session of its own and, on Linux, carry this run's
/// opener mark: neither it nor what it starts is ever part of a tool tree.
#[cfg(unix)]
pub(crate) fn detach_opener(cmd: &mut std::process::Command) {
    unix::detach_opener(cmd);
}

use std::sync::mpsc;

/// Prepares this process to end the trees it starts: on Linux it becomes a child subreaper and
/// starts the orphan reaper. Call it once, first thing in `main` (later calls do nothing).
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

/// Ends every tool tree this process started (see the module's invariants); returns when none
/// is left or after a few seconds. The shells call it as they exit; it never touches the
/// opener's programs or children some other code started in the app's own session.
pub fn end_all() {
    #[cfg(unix)]
    unix::end_all();
}

type Job = Box<dyn FnOnce() + Send>;

/// The thread every tool's child is forked from. It lives as long as the process: a parent-death
/// signal is tied to the thread that forked, so forking from a thread that may end (a blocking
/// pool thread) would kill the child with it.
fn keeper() -> &'static std::sync::Mutex<mpsc::Sender<Job>> {
    static KEEPER: std::sync::OnceLock<std::sync::Mutex<mpsc::Sender<Job>>> = std::sync::OnceLock::new();
    KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(KEEPER_NAME.into())
            .spawn(move || {
                for job in rx {
                    // A panicking spawn is reported to its caller (its answer never comes);
                    // the keeper goes on.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .expect("the process keeper thread starts");
        std::sync::Mutex::new(tx)
    })
}

const KEEPER_NAME: &str = "switchboard-process-keeper";

/// Whether this thread is the keeper.
pub(crate) fn on_keeper() -> bool {
    std::thread::current().name() == Some(KEEPER_NAME)
}

/// Runs `spawn` (which forks a tool's child) on the keeper thread, inside the caller's tokio
/// runtime, and returns what it returned. Children forked there get the parent-death signal.
pub async fn spawn_on_keeper<T: Send + 'static>(spawn: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = tokio::runtime::Handle::try_current().ok();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = handle.as_ref().map(tokio::runtime::Handle::enter);
        let _ = tx.send(spawn());
    });
    keeper()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send(job)
        .expect("the process keeper thread runs as long as the process");
    match rx.await {
        Ok(value) => value,
        Err(_) => panic!("a spawn on the process keeper thread panicked"),
    }
}
