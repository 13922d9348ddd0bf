//! switchboard-store
