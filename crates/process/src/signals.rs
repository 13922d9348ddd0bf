//! The signals that end the app or the CLI from outside (Ctrl-C's SIGINT, SIGTERM, SIGHUP when
//! the terminal closes): each still ends every tool tree before the process ends.
//!
//! Invariant: after the first such signal the process ends within `grace` plus the time
//! [`crate::tree::end_all`] takes (a few seconds at most), and every tool tree ends first. The
//! shell's handler decides whether the ordinary exit path can do it (a turn to stop, a window
//! to close); a second signal, or a handler that declines, ends the trees and the process at once.
//! Windows has none of these signals; its job objects end the children with the app.

use std::time::Duration;

/// What the handler is told: the signal's number (`libc::SIGINT`, ...) and its usual exit code
/// (128 + the number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// The signal's number.
    pub signal: i32,
    /// The exit code a process ended by it reports: 128 + its number.
    pub exit_code: i32,
}

/// Watches for SIGINT, SIGTERM and SIGHUP on a thread of its own. On the first one `handler` is
/// called: it returns `true` when the shell's ordinary exit will follow (which must call
/// [`crate::tree::end_all`]), `false` to end now. If the process is still running `grace` after a
/// `true`, or on a second signal, every tool tree is ended and the process exits with the
/// signal's code. Call it once; later calls do nothing.
pub fn on_exit_signals(handler: impl Fn(Received) -> bool + Send + 'static, grace: Duration) {
    #[cfg(unix)]
    unix::watch(Box::new(handler), grace);
    #[cfg(not(unix))]
    let _ = (handler, grace);
}

#[cfg(unix)]
mod unix {
    #![allow(unsafe_code)] // pipe, write and read for the self-pipe: see the SAFETY notes

    use super::Received;
    use std::time::Duration;

    pub(super) fn watch(handler: Box<dyn Fn(Received) -> bool + Send>, grace: Duration) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(move || {
            let mut fds = [0; 2];
            // SAFETY: pipe writes two new descriptors into the array it is given.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                tracing::warn!("cannot watch for signals: {}", std::io::Error::last_os_error());
                return;
            }
            let (read_fd, write_fd) = (fds[0], fds[1]);
            for fd in fds {
                // SAFETY: sets close-on-exec on a descriptor we own, so no child inherits it.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                let byte = u8::try_from(signal).unwrap_or(0);
                // SAFETY: the action only calls write(2), which is async-signal-safe, on a
                // descriptor that stays open for the life of the process.
                let registered = unsafe {
                    signal_hook_registry::register(signal, move || {
                        libc::write(write_fd, (&raw const byte).cast(), 1);
                    })
                };
                if let Err(e) = registered {
                    tracing::warn!("cannot watch for signal {signal}: {e}");
                }
            }
            let _ = std::thread::Builder::new().name("switchboard-signals".into()).spawn(move || {
                let mut first = true;
                loop {
                    let mut byte = 0u8;
                    // SAFETY: reads one byte into a local from the pipe's read end, which we own.
                    let n = unsafe { libc::read(read_fd, (&raw mut byte).cast(), 1) };
                    if n != 1 {
                        if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                            continue;
                        }
                        return;
                    }
                    let signal = i32::from(byte);
                    let received = Received { signal, exit_code: 128 + signal };
                    if first && handler(received) {
                        first = false;
                        let _ = std::thread::Builder::new().name("switchboard-exit-grace".into()).spawn(move || {
                            std::thread::sleep(grace);
                            end_and_exit(received);
                        });
                        continue;
                    }
                    end_and_exit(received);
                }
            });
        });
    }

    fn end_and_exit(received: Received) -> ! {
        crate::tree::end_all();
        std::process::exit(received.exit_code)
    }
}
