//! Built-in tools. Each is a [`Tool`](switchboard_core::Tool) with a JSON Schema, an example
//! output for dry runs, and a typed error the model can act on.
//!
//! Architecture invariant: tools get keys only through [`ToolContext::secrets`](switchboard_core::ToolContext)
//! and never log arguments or results at info level.

mod time;

pub use time::GetTime;

use std::sync::Arc;
use switchboard_core::{RegistryError, ToolRegistry};

/// A registry with every built-in tool.
pub fn builtin_registry() -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(GetTime::new()))?;
    Ok(registry)
}
