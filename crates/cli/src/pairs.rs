//! `NAME=VALUE` arguments (`--env`, `--header`, `--arg`, ...), read the same way by every
//! subcommand that takes them.

use crate::CliError;

/// `values` as a map; a value without `=` is an error naming `what` (the flag).
pub(crate) fn pairs(values: &[String], what: &str) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    values
        .iter()
        .map(|v| {
            v.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| CliError::config(format!("{what} '{v}' is not NAME=VALUE.")).into())
        })
        .collect()
}
