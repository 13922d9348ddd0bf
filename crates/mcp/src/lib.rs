//! MCP servers as tool sources.
//!
//! Each configured server becomes one [`McpServer`], a [`Source`](switchboard_core::Source) the
//! catalog composes like any other: its tools are `server__tool`, calls go over rmcp to a child
//! process (stdio) or a streamable-HTTP endpoint, and its status says in words why it is not
//! working when it is not. Its prompts, resources and resource templates ([`context`],
//! [`template`]) are asked for through the same connection.
//!
//! Invariants:
//! - rmcp's types stay inside this crate; the engine sees [`switchboard_core::Tool`] and
//!   [`switchboard_core::ToolSource::Mcp`].
//! - A stdio server is spawned from an argv array, never through a shell, and only once the
//!   person approved its command line ([`ServerConfig::command_fingerprint`]). It gets the
//!   minimal environment of `switchboard-process` plus its entry's `env`, nothing of the app's.
//! - A tool whose definition changed since it was approved, or that the server added after its
//!   tools were approved, is held back ([`HeldTool`]); each tool's lint findings are shown.
//! - Everything a server sends is bounded: stderr lines and their count, descriptions,
//!   instructions, results ([`convert::MAX_RESULT`]); an unparsable stdout line is skipped, and
//!   one over [`server::MAX_MESSAGE_BYTES`] fails the call it answers at once, naming its size.
//! - A secret in `env` or `headers` is a `${secret:NAME}` reference in the config, resolved only
//!   when the server starts; a remote server's requests never follow a redirect.
//! - A remote server's requests, and its sign-in's, reach only what [`net`] allows: public
//!   internet addresses, checked after resolution, unless its URL names a local address.

pub mod asks;
pub mod config;
pub mod context;
pub mod convert;
pub mod net;
pub mod oauth;
pub mod server;
pub mod template;

pub use config::{ConfigError, McpConfig, SamplingModel, ServerConfig};
pub use oauth::{Browser, TokenVault};
pub use server::{
    Approvals, ContextError, HeldTool, McpServer, OfferedTool, Offers, Options, ResourceUpdate, ServerDetail,
};
