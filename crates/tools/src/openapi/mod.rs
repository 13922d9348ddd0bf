//! OpenAPI 3.0 / 3.1 documents to HTTP tools: one [`HttpToolConfig`](crate::HttpToolConfig) per operation.
//!
//! Pure: [`parse`](fn@parse) reads the text (JSON or YAML), [`convert`](fn@convert) turns the document into tool
//! definitions with what it had to leave out as [`Converted::notes`]. Nothing is fetched (a
//! reference to another file is not followed) and nothing is registered; the caller shows the
//! operations, the person picks, and the picked definitions become [`HttpTool`](crate::HttpTool)s.
//!
//! Choices:
//! - Names: the `operationId`, else `method_path` (`get_pets_petId`), made provider-safe (other
//!   characters become `_`, a name over 64 characters is cut and ends in a hash of the whole),
//!   and unique in the document (`_2`, `_3`, … in document order).
//! - Parameters: path, query and header parameters become the tool's parameters under their
//!   own names, or an alias when the name is no placeholder name (`page[size]` → `page_size_`);
//!   the query or header keeps the real name. Cookie parameters are left out (with a note).
//!   Array parameters are asked for as one comma-separated string (what `style: simple` and
//!   `form` without `explode` mean); object-valued query parameters are left out.
//! - The JSON request body is **one parameter, `body`**, whose schema is the document's body
//!   schema, sent as it is (`"body": "{{body}}"`, typed). That keeps every body shape (arrays,
//!   `oneOf`, free-form objects) exact and never mixes body properties with path or query names.
//!   An optional body the model leaves out is sent as JSON `null`.
//! - Keys: `apiKey` in a header or the query → `{{secret:NAME}}` there; HTTP `bearer` →
//!   `Authorization: Bearer {{secret:NAME}}`; HTTP `basic` → `Authorization: Basic
//!   {{secret:NAME}}`, the secret holding the base64 of `user:password`. OAuth 2, OpenID
//!   Connect, mutual TLS and cookie keys are not supported: such operations are offered without
//!   them (with a note). `NAME` is [`OpenApiOptions::security`]'s entry for the scheme, else
//!   `<document name>-<scheme name>`.
//! - The base URL: an operation's or its path's own `servers` first, else
//!   [`OpenApiOptions::server`], else the document's first absolute http(s) server (server
//!   variables take their defaults).
//!
//! The folder, bottom up: `schema` (OpenAPI schemas to plain JSON Schema), `model` (the public
//! vocabulary: options, schemes, operations, the result), `parse` (text to a checked document),
//! `names` (tool names, placeholder aliases, key names), `security` (the document's schemes and
//! their key names), `operation` (one operation to one definition) and `convert` (the whole
//! document, operation by operation). Each uses only those before it.

mod convert;
mod model;
mod names;
mod operation;
mod parse;
mod schema;
mod security;

pub use convert::{DEFAULT_SELECTED_MAX, MAX_DOCUMENT_TOOL_BYTES, MAX_OPERATIONS, convert};
pub use model::{Converted, OpenApiOptions, Operation, SchemeInfo, SchemeKind};
pub use operation::MAX_DESCRIPTION_CHARS;
pub use parse::{MAX_DOCUMENT_BYTES, MAX_JSON_VALUES, OpenApiError, parse};
