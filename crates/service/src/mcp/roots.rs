//! The folders MCP servers are told of (`roots/list`): some for every server (`roots` at the top
//! of the MCP config) and some per server (its entry's `roots`), every server's first. A change
//! is saved in the config and reaches running servers at once (they are sent
//! `notifications/roots/list_changed`), with no restart.
//!
//! Invariants: a root is an absolute folder path, at most [`MAX_ROOTS`] in a list, without
//! duplicates; roots are advice to a server, never a permission (a stdio server runs as the
//! person and can read what they can), so setting them widens nothing and asks no confirmation.

use super::ServerConfig;
use crate::{Error, Result, Service};
use std::path::PathBuf;
use switchboard_core::ErrorKind;

/// The most roots in one list (every server's, or one server's).
pub const MAX_ROOTS: usize = 64;

impl Service {
    /// The roots a server with `config` is told of: every server's, then its own.
    pub(super) fn mcp_roots_of(&self, config: &ServerConfig) -> Vec<PathBuf> {
        let all = self.mcp_config().map(|c| c.roots).unwrap_or_default();
        let mut roots: Vec<PathBuf> = Vec::new();
        for root in all.into_iter().chain(config.roots.iter().cloned()) {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        roots
    }

    /// The roots of `server` (its own), or every server's when `server` is `None`.
    pub fn mcp_roots(&self, server: Option<&str>) -> Result<Vec<PathBuf>> {
        let config = self.mcp_config()?;
        match server {
            None => Ok(config.roots),
            Some(name) => config
                .mcp_servers
                .get(name)
                .map(|s| s.roots.clone())
                .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("There is no MCP server named '{name}'."))),
        }
    }

    /// Sets the roots of `server` (its own), or every server's when `server` is `None`; saves
    /// them and tells the running servers concerned.
    pub fn mcp_set_roots(&self, server: Option<&str>, roots: Vec<PathBuf>) -> Result<()> {
        let roots = checked(roots)?;
        let mut file = self.mcp_config()?;
        match server {
            None => file.roots = roots,
            Some(name) => {
                let Some(entry) = file.mcp_servers.get_mut(name) else {
                    return Err(Error::new(ErrorKind::NotFound, format!("There is no MCP server named '{name}'.")));
                };
                entry.roots = roots;
            }
        }
        self.save_mcp_config(&file)?;
        let running: Vec<_> = self.inner.mcp.lock().values().cloned().collect();
        for live in running {
            if server.is_none_or(|name| name == live.name())
                && let Some(entry) = file.mcp_servers.get(live.name())
            {
                live.set_roots(self.mcp_roots_of(entry));
            }
        }
        Ok(())
    }
}

/// `roots` without duplicates, each an absolute path; too many, or a relative one, is refused.
fn checked(roots: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    if roots.len() > MAX_ROOTS {
        return Err(Error::new(ErrorKind::BadRequest, format!("At most {MAX_ROOTS} folders can be given.")));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        if !root.is_absolute() {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("'{}' is not a full path to a folder.", root.display()),
            ));
        }
        if !out.contains(&root) {
            out.push(root);
        }
    }
    Ok(out)
}
