//! A scriptable mock LLM provider for Switchboard's end-to-end tests, benchmarks and demos.
//!
//! [`MockServer`] serves the OpenAI Chat Completions API on `127.0.0.1` and answers each chat
//! request with the next [`Reply`] of a [`Script`]: streamed text, reasoning and tool calls, or
//! faults such as HTTP errors, stalls, cut connections, malformed chunks and byte-split writes.
//! Every request is recorded for assertions.
//!
//! ```no_run
//! # async fn demo() {
//! use switchboard_mock_provider::{MockServer, Reply, Script};
//!
//! let server = MockServer::start(Script::new([
//!     Reply::tool_call("call_1", "get_time", "{}"),
//!     Reply::text("It is noon."),
//! ]))
//! .await;
//! let base_url = server.base_url(); // point the provider under test here
//! // ... run a turn ...
//! assert_eq!(server.requests().len(), 2);
//! # }
//! ```
//!
//! Replies are API-neutral; the wire format lives in one encoder module per API (today only
//! OpenAI Chat), selected by the request path.

mod anthropic;
mod api;
pub mod count;
mod echo;
mod gemini;
mod openai_chat;
mod openai_responses;
mod parts;
mod prompt;
mod resolve;
mod script;
mod server;
pub mod signatures;
mod sse;

pub use count::Counted;
pub use parts::SentPart;
pub use script::{ErrorCategory, ReasoningField, Reply, Route, Script, Step, StreamOptions};
pub use server::{ContextRefusal, MockServer, RecordedRequest};
