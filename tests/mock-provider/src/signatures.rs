//! The opaque tokens the mock hands out and later verifies: Anthropic thinking signatures, the
//! Responses API's reasoning `encrypted_content` and Gemini thought signatures.
//!
//! Each is a pure function of what it signs, so the mock can check a token sent back without
//! remembering it, and a test can compute the expected value. No randomness, no clock: the same
//! content always gets the same token. Every token is a prefix plus the 16 lowercase hex digits of
//! [`fnv1a64`] over a documented input.

use serde_json::Value;

/// The 64-bit FNV-1a hash of `bytes` (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

fn token(prefix: &str, input: &str) -> String {
    format!("{prefix}{:016x}", fnv1a64(input.as_bytes()))
}

/// The `signature` of an Anthropic `thinking` block whose text is `thinking`:
/// `"mocksig-"` + hex of `fnv1a64(thinking)`.
pub fn thinking_signature(thinking: &str) -> String {
    token("mocksig-", thinking)
}

/// The `encrypted_content` of a Responses `reasoning` item with id `item_id` whose summary texts,
/// concatenated, are `summary`: `"mockenc-"` + hex of `fnv1a64(item_id + "\n" + summary)`.
pub fn encrypted_content(item_id: &str, summary: &str) -> String {
    token("mockenc-", &format!("{item_id}\n{summary}"))
}

/// The Gemini `thoughtSignature` on a `functionCall` part calling `name` with `args`:
/// `"mockthought-"` + hex of `fnv1a64(name + "\n" + canonical_json(args))`, where
/// [`canonical_json`] sorts object keys, so the key order a client sends back does not matter.
pub fn function_call_signature(name: &str, args: &Value) -> String {
    token("mockthought-", &format!("{name}\n{}", canonical_json(args)))
}

/// The Gemini `thoughtSignature` on the last text part of a reply without calls whose
/// (non-thought) text, concatenated, is `text`: `"mockthought-"` + hex of `fnv1a64("text\n" + text)`.
pub fn text_signature(text: &str) -> String {
    token("mockthought-", &format!("text\n{text}"))
}

/// `value` as compact JSON with every object's keys in sorted order (serde_json's formatting
/// otherwise).
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical_json(&map[*k]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_are_fnv1a_of_their_documented_input() {
        // Reference values of 64-bit FNV-1a.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(thinking_signature("a"), "mocksig-af63dc4c8601ec8c");
        assert_eq!(encrypted_content("rs_1", "x"), format!("mockenc-{:016x}", fnv1a64(b"rs_1\nx")));
        assert_eq!(text_signature("Hi"), format!("mockthought-{:016x}", fnv1a64(b"text\nHi")));
        assert_eq!(
            function_call_signature("f", &json!({"b": 1, "a": [true, {"d": null, "c": "x"}]})),
            format!(
                "mockthought-{:016x}",
                fnv1a64(
                    br#"f
{"a":[true,{"c":"x","d":null}],"b":1}"#
                )
            )
        );
    }
}
