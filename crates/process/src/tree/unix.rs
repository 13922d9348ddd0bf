//! Unix: the session a tool's child leads, the registry of live roots and opener sessions, and
//! the end of trees (by process group here; by session and orphan sweep on Linux, in `linux`).
//!
//! Invariant: a pid is reaped by the reaper only when it is neither a live root (tokio waits for
//! those) nor the opener (its own thread waits for it), and never while a spawn is under way
//! (the child of a spawn in flight is not registered yet).

#![allow(unsafe_code)] // pre_exec, prctl, kill, waitpid: see the SAFETY notes

use process_wrap::tokio::{ChildWrapper, CommandWrap, CommandWrapper};
use std::collections::HashSet;
use std::future::Future;
use std::io::{Error, Result};
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a tree has between SIGTERM and SIGKILL.
pub(super) const GRACE: Duration = Duration::from_millis(1500);
/// The longest [`end_all`] takes.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) const END_LIMIT: Duration = Duration::from_secs(5);

// Without a process table (macOS and other Unixes) only the roots are read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Default)]
pub(super) struct Registry {
    /// Spawns under way: the reaper waits for none.
    pub(super) spawning: usize,
    /// Live roots (a tool's child, which leads its own session and group).
    pub(super) roots: HashSet<i32>,
    /// Children some other part of the app waits for (the opener).
    pub(super) owned: HashSet<i32>,
    /// The sessions of the openers: exempt from every sweep.
    pub(super) opener_sessions: HashSet<i32>,
}

pub(super) fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: std::sync::LazyLock<Mutex<Registry>> = std::sync::LazyLock::new(Mutex::default);
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn install() {
    #[cfg(target_os = "linux")]
    super::linux::install();
}

/// A spawn under way; the reaper does nothing while one is.
pub(crate) struct Spawning(());

impl Spawning {
    pub(crate) fn begin() -> Self {
        registry().spawning += 1;
        Spawning(())
    }
}

impl Drop for Spawning {
    fn drop(&mut self) {
        let mut r = registry();
        r.spawning = r.spawning.saturating_sub(1);
    }
}

impl std::fmt::Debug for Spawning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spawning")
    }
}

/// Registers the opener `pid`, which leads its own session: never swept, never reaped by us.
pub(crate) fn opener_started(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else { return };
    let mut r = registry();
    r.owned.insert(pid);
    r.opener_sessions.insert(pid);
}

/// The opener `pid` was waited for.
pub(crate) fn opener_ended(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        registry().owned.remove(&pid);
    }
}

pub(super) fn detach_opener(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    #[cfg(target_os = "linux")]
    cmd.env(super::linux::OPENER_MARK, super::linux::opener_mark());
    // SAFETY: the closure runs in the forked child before exec and only calls setsid, which is
    // async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(|| if libc::setsid() < 0 { Err(Error::last_os_error()) } else { Ok(()) });
    }
}

/// Wraps a command so its child leads a new session (and process group), gets SIGKILL when the
/// app dies (Linux, when forked from the keeper thread), and is ended with its whole group.
#[derive(Debug, Default)]
pub struct Tree {
    spawning: Option<Spawning>,
}

impl CommandWrapper for Tree {
    fn pre_spawn(&mut self, command: &mut tokio::process::Command, _core: &CommandWrap) -> Result<()> {
        self.spawning = Some(Spawning::begin());
        let parent = i32::try_from(std::process::id()).unwrap_or(0);
        let death_signal = cfg!(target_os = "linux") && super::on_keeper();
        // SAFETY: the closure runs in the forked child before exec and only makes
        // async-signal-safe system calls (setsid, prctl, getppid, _exit); it allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(Error::last_os_error());
                }
                #[cfg(target_os = "linux")]
                if death_signal {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) < 0 {
                        return Err(Error::last_os_error());
                    }
                    // The app may have died between the fork and the prctl: then no signal comes.
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                }
                let _ = (parent, death_signal);
                Ok(())
            });
        }
        Ok(())
    }

    fn post_spawn(
        &mut self,
        _command: &mut tokio::process::Command,
        child: &mut tokio::process::Child,
        _core: &CommandWrap,
    ) -> Result<()> {
        if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
            registry().roots.insert(pid);
        }
        self.spawning = None;
        Ok(())
    }

    fn wrap_child(&mut self, inner: Box<dyn ChildWrapper>, _core: &CommandWrap) -> Result<Box<dyn ChildWrapper>> {
        let pgid =
            inner.id().and_then(|p| i32::try_from(p).ok()).ok_or_else(|| Error::other("the child has no pid"))?;
        Ok(Box::new(TreeChild { inner, pgid, end: TreeEnd { pgid, ended: false } }))
    }
}

/// A root: signals go to its whole process group; once it has exited, what is left of its tree
/// is ended, and dropped before that, the whole tree is killed.
#[derive(Debug)]
pub struct TreeChild {
    inner: Box<dyn ChildWrapper>,
    pgid: i32,
    end: TreeEnd,
}

/// What is left to do for a tree: once its root was seen to exit, nothing.
#[derive(Debug)]
struct TreeEnd {
    pgid: i32,
    ended: bool,
}

impl Drop for TreeEnd {
    /// A root dropped before it was seen to exit (a call whose future was dropped): its group
    /// and, on Linux, its session are killed now, not at the app's exit.
    fn drop(&mut self) {
        if !self.ended {
            // SAFETY: killpg only sends a signal, to the root's own group.
            unsafe { libc::killpg(self.pgid, libc::SIGKILL) };
            #[cfg(target_os = "linux")]
            super::linux::signal_session(self.pgid, libc::SIGKILL);
        }
    }
}

impl TreeChild {
    fn signal_group(&self, sig: i32) -> Result<()> {
        // SAFETY: killpg only sends a signal; the group is the root's own (pgid = its pid).
        if unsafe { libc::killpg(self.pgid, sig) } < 0 { Err(Error::last_os_error()) } else { Ok(()) }
    }

    /// The root has exited and been reaped: it is no longer ours to keep from the reaper, and
    /// what is left of its tree goes now.
    fn root_exited(&mut self) {
        if std::mem::replace(&mut self.end.ended, true) {
            return;
        }
        registry().roots.remove(&self.pgid);
        end_rest_of_tree(self.pgid);
    }
}

impl ChildWrapper for TreeChild {
    fn inner(&self) -> &dyn ChildWrapper {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
        self.inner.as_mut()
    }
    fn into_inner(mut self: Box<Self>) -> Box<dyn ChildWrapper> {
        // Whoever takes the bare child takes the tree's end over too.
        self.end.ended = true;
        self.inner
    }
    fn start_kill(&mut self) -> Result<()> {
        match self.signal_group(libc::SIGKILL) {
            Ok(()) => Ok(()),
            Err(_) => self.inner.start_kill(),
        }
    }
    fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        let status = self.inner.try_wait()?;
        if status.is_some() {
            self.root_exited();
        }
        Ok(status)
    }
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = Result<ExitStatus>> + Send + '_>> {
        Box::pin(async move {
            let status = self.inner.wait().await?;
            self.root_exited();
            Ok(status)
        })
    }
    fn signal(&self, sig: i32) -> Result<()> {
        self.signal_group(sig)
    }
}

/// Ends what is left of the tree whose root (`pgid`) exited: its group (and on Linux its
/// session) gets SIGTERM now and SIGKILL after the grace.
fn end_rest_of_tree(pgid: i32) {
    let signal_all = move |sig: i32| {
        // SAFETY: killpg only sends a signal, to the root's own group.
        unsafe { libc::killpg(pgid, sig) };
        #[cfg(target_os = "linux")]
        super::linux::signal_session(pgid, sig);
    };
    if !any_left(pgid) {
        return;
    }
    signal_all(libc::SIGTERM);
    let _ = std::thread::Builder::new().name("switchboard-tree-end".into()).spawn(move || {
        let until = Instant::now() + GRACE;
        while Instant::now() < until && any_left(pgid) {
            std::thread::sleep(Duration::from_millis(50));
        }
        // Only while something is left: once the group is empty its id may name someone else's.
        if any_left(pgid) {
            signal_all(libc::SIGKILL);
        }
    });
}

/// Whether anything of the group `pgid` (or on Linux its session) is still running.
fn any_left(pgid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        super::linux::session_alive(pgid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }
}

pub(super) fn end_all() {
    #[cfg(target_os = "linux")]
    super::linux::end_all();
    #[cfg(not(target_os = "linux"))]
    end_groups();
}

/// Without a process table to read: SIGTERM to every live root's group, a grace, SIGKILL.
#[cfg(not(target_os = "linux"))]
fn end_groups() {
    let roots: Vec<i32> = registry().roots.iter().copied().collect();
    let started = Instant::now();
    for &pgid in &roots {
        // SAFETY: killpg only sends a signal, to a root's own group.
        unsafe { libc::killpg(pgid, libc::SIGTERM) };
    }
    while started.elapsed() < GRACE && roots.iter().any(|&g| any_left(g)) {
        std::thread::sleep(Duration::from_millis(50));
    }
    for &pgid in &roots {
        // SAFETY: as above.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
    }
}
