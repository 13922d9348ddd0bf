//! `switchboard models`: the model catalogue in use, refreshing it, and what one model holds,
//! costs and can do, with where each fact came from (as Settings and the model picker show it).

use crate::{render, runtime};
use clap::Subcommand;
use std::process::ExitCode;
use switchboard_core::Prices;
use switchboard_service::Service;
use switchboard_service::catalogue::{self, CatalogueInfo};
use switchboard_service::models::{ModelDetails, SpecSource};

#[derive(Subcommand, Debug)]
pub enum ModelsCmd {
    /// Download LiteLLM's current model catalogue and use it from now on (the bundled snapshot,
    /// or the last good one, stays when the download or the file is bad).
    Refresh {
        /// Download from this URL instead of LiteLLM's (a mirror).
        #[arg(long, value_name = "URL")]
        from: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// What a model holds, costs and can do, and where each of those came from.
    Show {
        /// The model (default: the profile's).
        model: Option<String>,
        /// The provider profile serving it (default: the default profile).
        #[arg(long)]
        profile: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(service: &Service, cmd: ModelsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ModelsCmd::Refresh { from, json } => {
            let url = from.as_deref().unwrap_or(catalogue::LITELLM_URL);
            let info = runtime().block_on(service.refresh_catalogue_from(url))?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&info)?));
            } else {
                println!("Model catalogue: {}. It is used from now on.", catalogue::describe(&info));
            }
        }
        ModelsCmd::Show { model, profile, json } => {
            let details = service.model_details(profile.as_deref(), model.as_deref())?;
            let info = service.catalogue_info();
            if json {
                let value = serde_json::json!({ "model": details, "catalogue": info });
                println!("{}", render::json(&serde_json::to_string_pretty(&value)?));
            } else {
                print!("{}", show(&details, &info));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a fact came from, in words (after the value, in parentheses).
fn from(source: Option<SpecSource>) -> &'static str {
    match source {
        Some(SpecSource::Profile) => "  (set on the profile)",
        Some(SpecSource::Listing) => "  (the server's model listing)",
        Some(SpecSource::Catalogue) => "  (the catalogue)",
        Some(SpecSource::Default) => "  (assumed: nobody knows it)",
        None => "",
    }
}

/// `10` as `$10`, `2.5` as `$2.50`, `0.075` as `$0.075`.
fn usd(price: f64) -> String {
    if price.fract() == 0.0 {
        format!("${price:.0}")
    } else if (price * 100.0).fract().abs() < 1e-9 {
        format!("${price:.2}")
    } else {
        format!("${price:.6}").trim_end_matches('0').to_owned()
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// The text `models show` prints.
fn show(d: &ModelDetails, info: &CatalogueInfo) -> String {
    let r = &d.resolved;
    let mut out = format!("{} (profile {})\n", render::safe(&d.model), render::safe(&d.provider));
    let window = r
        .spec
        .context_window
        .map_or_else(|| "unknown".into(), |w| format!("{} tokens", switchboard_core::tokens::thousands(w)));
    out += &format!("  Context window  {window}{}\n", from(Some(r.source)));
    let output = r
        .spec
        .max_output
        .map_or_else(|| "unknown".into(), |w| format!("{} tokens", switchboard_core::tokens::thousands(w)));
    out += &format!("  Output limit    {output}{}\n", from(r.max_output_source));
    match (r.free, r.spec.prices) {
        (true, _) => {
            out +=
                "  Prices          free (a server on this computer or network; set prices on the profile if it bills)\n"
        }
        (false, None) => out += "  Prices          price unknown (set them on the profile)\n",
        (false, Some(p)) => out += &prices(&p, from(r.prices_source)),
    }
    let c = &d.capabilities;
    out += &format!(
        "  Capabilities    tools {}, images {}, reasoning {}, PDF {}  (the profile, else the listing, else the catalogue, else the capability table)\n",
        yes_no(c.tools),
        yes_no(c.images.or(r.spec.images)),
        yes_no(c.reasoning),
        yes_no(c.pdf.or(r.spec.pdf)),
    );
    if let Some(note) = &d.note {
        out += &format!("  Note: {note}\n");
    }
    out += &format!("  Catalogue       {}\n", catalogue::describe(info));
    if let Some(problem) = &info.problem {
        out += &format!("  {problem}\n");
    }
    out
}

fn prices(p: &Prices, from: &str) -> String {
    let or = |v: Option<f64>, fallback: &str| v.map_or_else(|| format!("as {fallback}"), usd);
    format!(
        "  Prices          USD per million tokens{from}\n    input         {}\n    output        {}\n    cached read   {}\n    cache write   {}\n    reasoning     {}\n",
        usd(p.input),
        usd(p.output),
        or(p.cached_read, "input"),
        or(p.cache_write, "input"),
        or(p.reasoning, "output"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::tokens::thousands;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(
            (thousands(1_048_576), thousands(999), thousands(128_000)),
            ("1,048,576".into(), "999".into(), "128,000".into())
        );
        assert_eq!(
            (usd(2.5), usd(10.0), usd(0.075), usd(0.0)),
            ("$2.50".into(), "$10".into(), "$0.075".into(), "$0".into())
        );
    }
}
