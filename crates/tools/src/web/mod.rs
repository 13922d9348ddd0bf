//! The web tools: `web_search` (Tavily, Exa or SearXNG) and `web_fetch` (one page, read as
//! Markdown), configured by [`WebToolsConfig`].

mod config;
pub(crate) mod fetch;
mod html;
pub(crate) mod net;
mod search;

pub use config::{ConfigError, SETTINGS_PAGE, SearchBackend, WebToolsConfig};
pub use fetch::{BodyKind, DEFAULT_MAX_CHARS, FetchError, Fetched, Fetcher, MAX_MAX_CHARS, MAX_REDIRECTS, WebFetch};
pub use html::{Converted, to_markdown as html_to_markdown};
pub use net::{AddressPolicy, Blocked, Resolver, StandardPolicy, SystemResolver, non_public_reason};
pub use search::{DEFAULT_RESULTS, Hit, MAX_QUERY_CHARS, MAX_RESULTS, WebSearch, format_hits, key_env_var, parse_hits};
