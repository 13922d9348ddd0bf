//! switchboard-tools
