//! Linux: the app as a child subreaper, the process table read from `/proc`, the orphan reaper,
//! and the exit sweep.
//!
//! Invariant: the sweep and the reaper touch only descendants of this process that are outside
//! its own session and outside every opener's session (and do not carry an opener's mark):
//! that set is exactly the tool trees (see the parent module). Children that other code of the
//! app starts in its own session (the webview's processes, for one) are never signalled or
//! reaped here.

#![allow(unsafe_code)] // prctl, kill, killpg, waitpid, getsid: see the SAFETY notes

use super::unix::{END_LIMIT, GRACE, registry};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often the reaper looks for ended orphans.
const REAP_EVERY: Duration = Duration::from_secs(2);

/// The mark the opener's processes carry in their environment, with this run's value.
pub(crate) const OPENER_MARK: &str = "SWITCHBOARD_OPENED_BY";

/// This run's value of [`OPENER_MARK`]: random, so a tool cannot claim to be the opener.
pub(crate) fn opener_mark() -> &'static str {
    static MARK: OnceLock<String> = OnceLock::new();
    MARK.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let a = std::collections::hash_map::RandomState::new().build_hasher().finish();
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        format!("{a:016x}{:016x}", h.finish())
    })
}

/// One line of the process table.
#[derive(Clone, Copy, Debug)]
pub(super) struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub zombie: bool,
}

/// `/proc/<pid>/stat`, parsed after the command name (which may hold spaces and parentheses).
fn stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgid = f.next()?.parse().ok()?;
    let sid = f.next()?.parse().ok()?;
    Some(Proc { pid, ppid, pgid, sid, zombie: state == "Z" || state == "X" })
}

/// Every process the system shows.
pub(super) fn table() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).filter_map(stat).collect()
}

fn me() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
}

fn my_session() -> i32 {
    // SAFETY: getsid(0) only reads this process's session id.
    unsafe { libc::getsid(0) }
}

/// Whether `pid` carries this run's opener mark.
fn marked_as_opener(pid: i32) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
    let want = format!("{OPENER_MARK}={}", opener_mark());
    env.split(|b| *b == 0).any(|v| v == want.as_bytes())
}

/// The tool trees' processes in `table`: the subtrees under this process whose top is outside
/// its session and is no opener's.
pub(super) fn tool_members(table: &[Proc]) -> Vec<Proc> {
    let (me, mine) = (me(), my_session());
    let openers: HashSet<i32> = registry().opener_sessions.clone();
    let mut children: HashMap<i32, Vec<Proc>> = HashMap::new();
    for p in table {
        children.entry(p.ppid).or_default().push(*p);
    }
    let mut out = Vec::new();
    let mut stack: Vec<Proc> = children
        .get(&me)
        .map(|c| {
            c.iter()
                .filter(|p| p.sid != mine && !openers.contains(&p.sid) && (p.zombie || !marked_as_opener(p.pid)))
                .copied()
                .collect()
        })
        .unwrap_or_default();
    while let Some(p) = stack.pop() {
        out.push(p);
        if let Some(c) = children.get(&p.pid) {
            stack.extend(c.iter().copied());
        }
    }
    out
}

pub(super) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
        let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) } == 0;
        if !ok {
            tracing::warn!("could not become a child subreaper: {}", std::io::Error::last_os_error());
            return;
        }
        let _ = std::thread::Builder::new().name("switchboard-orphan-reaper".into()).spawn(|| {
            loop {
                std::thread::sleep(REAP_EVERY);
                reap_orphans();
            }
        });
    });
}

/// Reaps the tool trees' orphans that have ended (they became our children as we are their
/// subreaper), and forgets roots that are gone.
pub(super) fn reap_orphans() {
    let mut r = registry();
    if r.spawning > 0 {
        return;
    }
    let table = table();
    let alive: HashSet<i32> = table.iter().map(|p| p.pid).collect();
    r.roots.retain(|p| alive.contains(p));
    r.owned.retain(|p| alive.contains(p));
    let (me, mine) = (me(), my_session());
    for p in table.iter().filter(|p| p.ppid == me && p.zombie && p.sid != mine) {
        if !r.roots.contains(&p.pid) && !r.owned.contains(&p.pid) {
            reap(p.pid);
        }
    }
}

fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waitpid on one pid that is our zombie child and that no other code waits for.
    unsafe { libc::waitpid(pid, &raw mut status, libc::WNOHANG) };
}

/// Sends `sig` to every process of the session `sid` that descends from this process.
pub(super) fn signal_session(sid: i32, sig: i32) {
    for p in tool_members(&table()).iter().filter(|p| p.sid == sid && !p.zombie) {
        // SAFETY: kill only sends a signal, to a process of a tool's tree.
        unsafe { libc::kill(p.pid, sig) };
    }
}

/// Whether a process of the session `sid` (a tool tree's) is still running.
pub(super) fn session_alive(sid: i32) -> bool {
    tool_members(&table()).iter().any(|p| (p.sid == sid || p.pgid == sid) && !p.zombie)
}

/// SIGTERM to every tool tree's process, a grace, then SIGKILL until none is left (newly
/// orphaned ones included) or the time limit; the ended ones are reaped.
pub(super) fn end_all() {
    let started = Instant::now();
    // SAFETY: getpgrp only reads this process's group id.
    let my_group = unsafe { libc::getpgrp() };
    let mut termed = false;
    loop {
        let members = tool_members(&table());
        for p in members.iter().filter(|p| p.zombie && p.ppid == me()) {
            reap(p.pid);
        }
        let live: Vec<&Proc> = members.iter().filter(|p| !p.zombie).collect();
        if live.is_empty() || started.elapsed() > END_LIMIT {
            return;
        }
        let signal = if !termed {
            termed = true;
            Some(libc::SIGTERM)
        } else if started.elapsed() > GRACE {
            Some(libc::SIGKILL)
        } else {
            None
        };
        if let Some(signal) = signal {
            let groups: HashSet<i32> = live.iter().map(|p| p.pgid).filter(|g| *g > 1 && *g != my_group).collect();
            for g in groups {
                // SAFETY: killpg only sends a signal, to a tool tree's group (never ours).
                unsafe { libc::killpg(g, signal) };
            }
            for p in &live {
                // SAFETY: kill only sends a signal, to a tool tree's process.
                unsafe { libc::kill(p.pid, signal) };
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
