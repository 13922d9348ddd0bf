//! switchboard-providers
