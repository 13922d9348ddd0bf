//! Which model catalogue the service uses: the snapshot bundled with the app, or the one the
//! person refreshed from LiteLLM, kept in the data directory and used from then on (and at the
//! next start).
//!
//! Invariant: a catalogue is only ever replaced by one that parsed. A download that fails, is too
//! large, slow or redirected elsewhere, or a file that is corrupt or from a newer format, leaves
//! the one in use (the last good one, else the bundled snapshot) in place, and the person is told
//! why ([`CatalogueInfo::problem`], the refresh's error). The saved file is written whole
//! (temporary file, then rename) only after it parsed.

use crate::{Error, Result};
use futures::StreamExt;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use switchboard_core::ErrorKind;
use switchboard_models::Catalogue;

/// Where a refresh downloads LiteLLM's current catalogue from.
pub const LITELLM_URL: &str =
    "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json";

/// The largest catalogue a refresh downloads (LiteLLM's is about 1.5 MB).
pub const MAX_BYTES: usize = 16 << 20;

/// How long a refresh may take, connection to last byte.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The refreshed catalogue's file in the data directory, as downloaded.
const FILE: &str = "model_catalogue.json";

/// What the refreshed file is: its date and where it came from.
const META_FILE: &str = "model_catalogue.meta.json";

/// Where the catalogue in use came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum CatalogueSource {
    /// The snapshot bundled with the app.
    Bundled,
    /// A refresh, kept in the data directory.
    Refreshed,
}

/// The catalogue in use, as Settings and `switchboard models` show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CatalogueInfo {
    /// Bundled or refreshed.
    pub source: CatalogueSource,
    /// The snapshot's date (`YYYY-MM-DD`): LiteLLM's for the bundled one, the day of the refresh
    /// for a refreshed one.
    pub date: String,
    /// How many models it knows.
    pub models: u32,
    /// Why a refreshed catalogue is not the one in use, when one was saved but could not be read.
    pub problem: Option<String>,
}

/// A catalogue: the bundled one (never copied) or a refreshed one.
#[derive(Clone)]
pub(crate) enum Held {
    Bundled(&'static Catalogue),
    Refreshed(Arc<Catalogue>),
}

impl std::ops::Deref for Held {
    type Target = Catalogue;

    fn deref(&self) -> &Catalogue {
        match self {
            Held::Bundled(c) => c,
            Held::Refreshed(c) => c,
        }
    }
}

/// The catalogue in use and what it is.
#[derive(Clone)]
pub(crate) struct Current {
    pub(crate) catalogue: Held,
    pub(crate) info: CatalogueInfo,
}

/// The service's catalogue: loaded on first use (a CLI command that never asks about a model does
/// not parse it), replaced by a refresh.
pub(crate) struct Catalogues {
    dir: Option<PathBuf>,
    current: RwLock<Option<Current>>,
}

impl Catalogues {
    /// Catalogues kept in `dir` (none: the bundled snapshot, and refreshes kept in memory).
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        Self { dir, current: RwLock::new(None) }
    }

    /// The catalogue in use.
    pub(crate) fn current(&self) -> Current {
        if let Some(c) = self.current.read().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
            return c.clone();
        }
        let mut slot = self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.get_or_insert_with(|| load(self.dir.as_deref())).clone()
    }

    /// Parses `bytes` as LiteLLM's catalogue and, when they parse, keeps them (in the data
    /// directory, dated `date`) and uses them from now on. Otherwise nothing changes.
    pub(crate) fn replace(&self, bytes: &[u8], date: &str, from: &str) -> Result<CatalogueInfo> {
        let catalogue = Catalogue::parse(bytes).map_err(|e| {
            Error::new(
                ErrorKind::Protocol,
                format!(
                    "The downloaded model catalogue could not be read ({e}); the one in use ({}) is kept.",
                    describe(&self.current().info)
                ),
            )
        })?;
        if let Some(dir) = &self.dir {
            save(dir, bytes, &Meta { date: date.to_owned(), from: from.to_owned() }).map_err(|e| {
                Error::new(
                    ErrorKind::Storage,
                    format!("The refreshed model catalogue could not be saved in {}: {e}.", dir.display()),
                )
            })?;
        }
        let info = CatalogueInfo {
            source: CatalogueSource::Refreshed,
            date: date.to_owned(),
            models: count(&catalogue),
            problem: None,
        };
        *self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(Current { catalogue: Held::Refreshed(Arc::new(catalogue)), info: info.clone() });
        Ok(info)
    }
}

/// "the LiteLLM snapshot of 2026-11-20 (2,345 models)".
pub fn describe(info: &CatalogueInfo) -> String {
    let what = match info.source {
        CatalogueSource::Bundled => "bundled LiteLLM snapshot",
        CatalogueSource::Refreshed => "LiteLLM snapshot",
    };
    format!("{what} of {} ({} models)", info.date, info.models)
}

fn count(catalogue: &Catalogue) -> u32 {
    u32::try_from(catalogue.len()).unwrap_or(u32::MAX)
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    date: String,
    from: String,
}

fn bundled(problem: Option<String>) -> Current {
    let catalogue = Catalogue::bundled();
    Current {
        info: CatalogueInfo {
            source: CatalogueSource::Bundled,
            date: switchboard_models::SNAPSHOT_DATE.to_owned(),
            models: count(catalogue),
            problem,
        },
        catalogue: Held::Bundled(catalogue),
    }
}

/// The refreshed catalogue in `dir` when there is one that parses, else the bundled one (with
/// why, when a saved one could not be used).
fn load(dir: Option<&Path>) -> Current {
    let Some(dir) = dir else { return bundled(None) };
    let path = dir.join(FILE);
    let bytes = match read_bounded(&path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return bundled(None),
        Err(e) => return unusable(&path, &e),
    };
    let catalogue = match Catalogue::parse(&bytes) {
        Ok(c) => c,
        Err(e) => return unusable(&path, &e.to_string()),
    };
    let meta: Option<Meta> = std::fs::read(dir.join(META_FILE)).ok().and_then(|b| serde_json::from_slice(&b).ok());
    Current {
        info: CatalogueInfo {
            source: CatalogueSource::Refreshed,
            date: meta.map_or_else(|| "an unknown date".to_owned(), |m| m.date),
            models: count(&catalogue),
            problem: None,
        },
        catalogue: Held::Refreshed(Arc::new(catalogue)),
    }
}

fn unusable(path: &Path, why: &str) -> Current {
    let problem = format!(
        "The refreshed model catalogue ({}) could not be read ({why}); the bundled snapshot is used. Refresh it again.",
        path.display()
    );
    tracing::warn!("{problem}");
    bundled(Some(problem))
}

/// The file's bytes, none when there is no file; an error for one too large or unreadable.
fn read_bounded(path: &Path) -> std::result::Result<Option<Vec<u8>>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if meta.len() > MAX_BYTES as u64 {
        return Err(format!("it is larger than {} MiB", MAX_BYTES >> 20));
    }
    std::fs::read(path).map(Some).map_err(|e| e.to_string())
}

fn save(dir: &Path, bytes: &[u8], meta: &Meta) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let write = |name: &str, data: &[u8]| -> std::io::Result<()> {
        let tmp = dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, data)?;
        std::fs::rename(&tmp, dir.join(name))
    };
    write(FILE, bytes)?;
    write(META_FILE, &serde_json::to_vec(meta).unwrap_or_default())
}

/// Downloads `url` on the person's network: at most [`MAX_BYTES`], within [`TIMEOUT`], following
/// redirects only within its origin.
pub(crate) async fn download(url: &str) -> Result<Vec<u8>> {
    let failed = |why: String| {
        Error::new(ErrorKind::Network, format!("The model catalogue could not be downloaded from {url}: {why}"))
    };
    let origin = switchboard_providers::transport::origin(url);
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= 5 || switchboard_providers::transport::origin(attempt.url().as_str()) != origin {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    let client = reqwest::Client::builder()
        .redirect(redirects)
        .connect_timeout(TIMEOUT)
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let fetch = async {
        let response = client.get(url).send().await.map_err(|e| failed(format!("{e}.")))?;
        let status = response.status();
        if status.is_redirection() {
            return Err(failed(format!("it redirects to another address (HTTP {status}), which is not followed.")));
        }
        if !status.is_success() {
            return Err(failed(format!("the server answered HTTP {status}.")));
        }
        if response.content_length().is_some_and(|n| n > MAX_BYTES as u64) {
            return Err(failed(format!("it is larger than {} MiB.", MAX_BYTES >> 20)));
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| failed(format!("{e}.")))?;
            if body.len() + chunk.len() > MAX_BYTES {
                return Err(failed(format!("it is larger than {} MiB.", MAX_BYTES >> 20)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    tokio::time::timeout(TIMEOUT, fetch).await.unwrap_or_else(|_| {
        Err(Error::new(
            ErrorKind::Timeout,
            format!("The model catalogue download from {url} took longer than {} s.", TIMEOUT.as_secs()),
        ))
    })
}

impl crate::Service {
    /// The model catalogue in use.
    pub fn catalogue_info(&self) -> CatalogueInfo {
        self.inner.catalogues.current().info
    }

    /// Downloads LiteLLM's current catalogue and uses it from now on (see [`LITELLM_URL`]).
    pub async fn refresh_catalogue(&self) -> Result<CatalogueInfo> {
        self.refresh_catalogue_from(LITELLM_URL).await
    }

    /// [`Self::refresh_catalogue`] from `url` (a mirror; tests). On any failure the catalogue in
    /// use stays, and the error says why.
    pub async fn refresh_catalogue_from(&self, url: &str) -> Result<CatalogueInfo> {
        let bytes = download(url).await?;
        let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
        let (service, url) = (self.clone(), url.to_owned());
        tokio::task::spawn_blocking(move || service.inner.catalogues.replace(&bytes, &date, &url))
            .await
            .map_err(|e| Error::new(ErrorKind::Internal, format!("The catalogue refresh stopped: {e}")))?
    }
}
