//! The public vocabulary of a conversion: what the caller asks for ([`OpenApiOptions`]) and what
//! it gets back ([`Converted`]: the document's servers, its security schemes, one [`Operation`]
//! per operation that could become a tool, and notes on what was left out). Data only.

use crate::HttpToolConfig;
use std::collections::{BTreeMap, BTreeSet};

/// How to convert a document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenApiOptions {
    /// The name the person gave the API; default key names derive from it (`petstore-api_key`).
    pub document_name: String,
    /// The base URL to call; `None`: the document's first absolute http(s) server.
    pub server: Option<String>,
    /// Security scheme name → the key store entry holding its key.
    pub security: BTreeMap<String, String>,
    /// The tool names to select; `None`: all when there are at most [`DEFAULT_SELECTED_MAX`](super::DEFAULT_SELECTED_MAX)
    /// operations, else none.
    pub include: Option<BTreeSet<String>>,
}

/// What kind of key a security scheme asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemeKind {
    /// `apiKey` in a header (its name).
    ApiKeyHeader(String),
    /// `apiKey` in the query string (the parameter's name).
    ApiKeyQuery(String),
    /// `apiKey` in a cookie (not supported).
    ApiKeyCookie(String),
    /// `http` `bearer`.
    HttpBearer,
    /// `http` `basic`: the key is the base64 of `user:password`.
    HttpBasic,
    /// Another `http` scheme (not supported).
    HttpOther(String),
    /// `oauth2` (not supported).
    OAuth2,
    /// `openIdConnect` (not supported).
    OpenIdConnect,
    /// `mutualTLS` (not supported).
    MutualTls,
    /// Anything else (not supported).
    Other(String),
}

/// One of the document's security schemes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemeInfo {
    /// Its name in `components.securitySchemes`.
    pub name: String,
    /// What it is.
    pub kind: SchemeKind,
    /// Whether the tools can send it.
    pub supported: bool,
    /// The key store entry its tools use (supported schemes only).
    pub secret: Option<String>,
    /// The document's description of it.
    pub description: String,
}

/// One operation, as a tool definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// The definition; it passes [`HttpToolConfig::check`].
    pub tool: HttpToolConfig,
    /// The method, upper case.
    pub method: String,
    /// The path as the document writes it (`/pets/{petId}`).
    pub path: String,
    /// The operation's summary (may be empty).
    pub summary: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether it is offered by default (see [`OpenApiOptions::include`]).
    pub selected: bool,
}

/// A converted document.
#[derive(Clone, Debug, PartialEq)]
pub struct Converted {
    /// `info.title`.
    pub title: String,
    /// The document's server URLs, variables replaced by their defaults.
    pub servers: Vec<String>,
    /// Its security schemes.
    pub security_schemes: Vec<SchemeInfo>,
    /// One per operation that could become a tool, in document order.
    pub operations: Vec<Operation>,
    /// What was not supported and left out, each naming the operation or feature.
    pub notes: Vec<String>,
}
