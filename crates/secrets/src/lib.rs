//! switchboard-secrets
