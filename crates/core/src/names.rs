//! Provider-safe tool names: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, deterministic, reversible per request.

use std::collections::HashMap;

const MAX_LEN: usize = 64;

/// The prefix of agents' tool names (`agent__Name`): no other source's tool may use it.
pub const AGENT_PREFIX: &str = "agent__";

/// FNV-1a: stable across runs and platforms (std's hasher is randomly seeded).
fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The sanitized form of `name` without the uniqueness step.
fn sanitize(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

fn with_suffix(base: &str, original: &str) -> String {
    let suffix = format!("_{:08x}", fnv1a(original));
    let keep = MAX_LEN - suffix.len();
    let mut out: String = base.chars().take(keep).collect();
    out.push_str(&suffix);
    out
}

/// The mapping between registry names and the names one request sends to a provider.
#[derive(Clone, Debug, Default)]
pub struct NameMap {
    to_safe: HashMap<String, String>,
    to_original: HashMap<String, String>,
}

impl NameMap {
    /// Builds the mapping for `names`. Valid names are kept as they are; the rest are sanitized,
    /// and names that are too long or clash get a hash suffix of the original name.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut map = NameMap::default();
        let mut pending = Vec::new();
        for name in names {
            let safe = sanitize(name);
            if safe == name && safe.len() <= MAX_LEN && !map.to_original.contains_key(&safe) {
                map.insert(name, safe);
            } else {
                pending.push(name);
            }
        }
        // Renamed names go second so that a valid name never loses its spelling to a renamed one.
        for name in pending {
            let mut safe = sanitize(name);
            if safe.len() > MAX_LEN || map.to_original.contains_key(&safe) {
                safe = with_suffix(&safe, name);
            }
            let mut salt = 0u32;
            while map.to_original.contains_key(&safe) {
                salt += 1;
                safe = with_suffix(&sanitize(name), &format!("{name}#{salt}"));
            }
            map.insert(name, safe);
        }
        map
    }

    fn insert(&mut self, original: &str, safe: String) {
        self.to_original.insert(safe.clone(), original.to_owned());
        self.to_safe.insert(original.to_owned(), safe);
    }

    /// The provider-safe name of a registry name.
    pub fn safe<'a>(&'a self, original: &'a str) -> &'a str {
        self.to_safe.get(original).map_or(original, String::as_str)
    }

    /// The registry name of a provider-safe name; unknown names come back unchanged.
    pub fn original<'a>(&'a self, safe: &'a str) -> &'a str {
        self.to_original.get(safe).map_or(safe, String::as_str)
    }
}

/// Whether `name` may be sent to every provider as it is.
pub fn is_provider_safe(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_LEN && sanitize(name) == name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_unchanged() {
        let map = NameMap::new(["get_time", "server__tool", "a-b"]);
        assert_eq!(map.safe("get_time"), "get_time");
        assert_eq!(map.safe("server__tool"), "server__tool");
        assert_eq!(map.original("a-b"), "a-b");
    }

    #[test]
    fn invalid_characters_and_leading_digit_are_sanitized_and_mapped_back() {
        let map = NameMap::new(["my server.search", "1tool"]);
        assert_eq!(map.safe("my server.search"), "my_server_search");
        assert_eq!(map.safe("1tool"), "_1tool");
        assert_eq!(map.original("_1tool"), "1tool");
        assert!(is_provider_safe(map.safe("my server.search")));
    }

    #[test]
    fn long_names_are_shortened_deterministically() {
        let long = format!("server__{}", "x".repeat(100));
        let a = NameMap::new([long.as_str()]);
        let b = NameMap::new([long.as_str()]);
        let safe = a.safe(&long).to_owned();
        assert_eq!(safe.len(), 64);
        assert_eq!(safe, b.safe(&long));
        assert!(is_provider_safe(&safe));
        assert_eq!(a.original(&safe), long);
    }

    #[test]
    fn clashing_names_get_distinct_safe_names() {
        let map = NameMap::new(["a.b", "a_b", "a b"]);
        assert_eq!(map.safe("a_b"), "a_b", "a valid name keeps its spelling");
        let x = map.safe("a.b").to_owned();
        let y = map.safe("a b").to_owned();
        assert_ne!(x, y);
        assert_ne!(x, "a_b");
        assert_eq!(map.original(&x), "a.b");
        assert_eq!(map.original(&y), "a b");
    }

    #[test]
    fn unknown_names_map_to_themselves() {
        let map = NameMap::new(["a"]);
        assert_eq!(map.original("nope"), "nope");
    }
}
