//! Settings (JSON values by key) and provider profiles.
//!
//! Invariant: no secret is stored here: a profile's key lives in the keychain, never in the database.

use super::{Store, from_json, now_millis, to_json};
use crate::error::{Error, Result};
use crate::model::{ProfileOptions, ProviderProfile};
use rusqlite::{OptionalExtension, Row};
use serde::Serialize;
use serde::de::DeserializeOwned;

impl Store {
    /// A setting, or `None` if it was never set. [`Error::Json`] if it has another shape than `T`.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let value: Option<String> = self
            .conn()
            .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?;
        value.map(|v| from_json(&v, || format!("setting '{key}'"))).transpose()
    }

    /// Sets a setting (stored as JSON).
    pub fn set_setting<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<()> {
        let json = to_json(value, &format!("setting '{key}'"))?;
        self.conn().prepare_cached(
            "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )?
        .execute((key, json))?;
        Ok(())
    }

    /// Removes a setting; returns whether it existed.
    pub fn delete_setting(&self, key: &str) -> Result<bool> {
        Ok(self.conn().execute("DELETE FROM settings WHERE key = ?1", [key])? > 0)
    }

    // ----- provider profiles -------------------------------------------------------------------

    /// Creates or replaces the profile named `profile.name`.
    pub fn upsert_provider(&self, profile: &ProviderProfile) -> Result<()> {
        self.conn().execute(
            "INSERT INTO providers (name, kind, base_url, model, options, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, base_url = excluded.base_url, model = excluded.model,
                                              options = excluded.options",
            (&profile.name, &profile.kind, &profile.base_url, &profile.model, options_json(&profile.options), now_millis()),
        )?;
        Ok(())
    }

    /// All provider profiles, by name.
    pub fn providers(&self) -> Result<Vec<ProviderProfile>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT name, kind, base_url, model, options FROM providers ORDER BY name")?;
        let rows = stmt.query_map([], provider_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One provider profile, or `None`.
    pub fn provider(&self, name: &str) -> Result<Option<ProviderProfile>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT name, kind, base_url, model, options FROM providers WHERE name = ?1")?
            .query_row([name], provider_from_row)
            .optional()?)
    }

    /// Deletes a provider profile ([`Error::NotFound`] if there is none by that name).
    pub fn delete_provider(&self, name: &str) -> Result<()> {
        let n = self.conn().execute("DELETE FROM providers WHERE name = ?1", [name])?;
        if n == 0 {
            return Err(Error::not_found("provider", name));
        }
        Ok(())
    }
}

fn provider_from_row(r: &Row<'_>) -> rusqlite::Result<ProviderProfile> {
    let options: Option<String> = r.get(4)?;
    Ok(ProviderProfile {
        name: r.get(0)?,
        kind: r.get(1)?,
        base_url: r.get(2)?,
        model: r.get(3)?,
        // Options written by a newer version and not understood here fall back to the defaults
        // rather than hiding the profile.
        options: options.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default(),
    })
}

/// A profile's options as stored: `NULL` when they are all defaults.
fn options_json(options: &ProfileOptions) -> Option<String> {
    (*options != ProfileOptions::default()).then(|| serde_json::to_string(options).unwrap_or_default())
}
