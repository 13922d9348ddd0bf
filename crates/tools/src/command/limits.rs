//! The limits a command tool's configuration may set, and the defaults when it sets none. The
//! configuration's checks and the error messages both read them from here.

/// The time limit when none is configured, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The longest time limit a command tool can have, in seconds (an hour).
pub const MAX_TIMEOUT_SECS: u64 = 3600;
/// How much of stdout (and of stderr) is kept when no limit is configured.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 64 * 1024;
/// The largest output limit a command tool can have.
pub const MAX_OUTPUT_BYTES: u64 = 4 * 1024 * 1024;
