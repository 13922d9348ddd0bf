//! An MCP server's prompts and resources at the terminal: `mcp prompts NAME`, `mcp resources
//! NAME`, and what `chat --prompt SERVER/PROMPT --arg k=v` and `chat --resource URI` put in the
//! message. Everything a server wrote is printed through `render::safe`.

use crate::{CliError, render};
use switchboard_service::Service;
use switchboard_service::mcp::{McpPrompts, McpResources};

/// `mcp prompts NAME`: each prompt, its title and description, and its arguments under it.
pub(crate) fn print_prompts(p: &McpPrompts) {
    if p.prompts.is_empty() {
        println!("The MCP server '{}' offers no prompts.", render::safe(&p.server));
    }
    for prompt in &p.prompts {
        let about: Vec<&str> = [prompt.title.as_deref(), prompt.description.as_deref()].into_iter().flatten().collect();
        println!("{:<24} {}", render::safe(&prompt.name), render::safe(&about.join(" — ")));
        for a in &prompt.arguments {
            let name = if a.required { format!("{} (required)", a.name) } else { a.name.clone() };
            println!("    {:<24} {}", render::safe(&name), render::safe(a.description.as_deref().unwrap_or("")));
        }
    }
    for why in &p.skipped {
        println!("skipped {}", render::safe(why));
    }
}

/// `mcp resources NAME`: each resource (URI, name, media type, description), then each template
/// with its variables.
pub(crate) fn print_resources(r: &McpResources) {
    if r.resources.is_empty() && r.templates.is_empty() {
        println!("The MCP server '{}' offers no resources.", render::safe(&r.server));
    }
    for res in &r.resources {
        let mime = res.resource.mime_type.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        let updated = if res.updates > 0 { " [updated]" } else { "" };
        println!(
            "{}  {}{}{updated}",
            render::safe(&res.resource.uri),
            render::safe(&res.resource.name),
            render::safe(&mime)
        );
        if let Some(d) = &res.resource.description {
            println!("    {}", render::safe(d));
        }
    }
    if !r.templates.is_empty() {
        println!("Templates (attach with `chat --resource URI` after filling in the variables):");
    }
    for t in &r.templates {
        let mime = t.mime_type.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        println!("{}  {}{}", render::safe(&t.uri_template), render::safe(&t.name), render::safe(&mime));
        if !t.variables.is_empty() {
            println!("    variables: {}", render::safe(&t.variables.join(", ")));
        }
        if let Some(problem) = &t.problem {
            println!("    not usable: {}", render::safe(problem));
        }
        if let Some(d) = &t.description {
            println!("    {}", render::safe(d));
        }
    }
    for why in &r.skipped {
        println!("skipped {}", render::safe(why));
    }
}

/// The text of `chat --prompt SERVER/PROMPT` with its `--arg`s; the prompt's files (images,
/// embedded resources) are added to `attachments`, and the notes about what it could not carry
/// are printed on stderr.
pub(crate) fn prompt_text(
    service: &Service,
    which: &str,
    args: &[String],
    attachments: &mut Vec<String>,
) -> anyhow::Result<String> {
    let Some((server, prompt)) = which.split_once('/').filter(|(s, p)| !s.is_empty() && !p.is_empty()) else {
        return Err(CliError::config(format!(
            "'{which}' is not SERVER/PROMPT (see `switchboard mcp prompts SERVER`)."
        ))
        .into());
    };
    let args = crate::pairs::pairs(args, "--arg")?;
    let got = crate::runtime().block_on(service.mcp_get_prompt(server, prompt, &args))?;
    for note in &got.notes {
        eprintln!("note: {}", render::safe(note));
    }
    for a in &got.attachments {
        eprintln!("{}", render::attachment_line(a));
        attachments.push(a.id.clone());
    }
    Ok(got.text)
}

/// Attaches one `chat --resource URI` (or `SERVER:URI` when several servers could have it),
/// stored like a file named by its URI; its id.
pub(crate) fn attach_resource(service: &Service, which: &str) -> anyhow::Result<String> {
    let rt = crate::runtime();
    let (server, uri) = match which.split_once(':') {
        Some((server, uri))
            if uri.contains(':') && service.mcp_servers()?.servers.iter().any(|s| s.detail.name == server) =>
        {
            (server.to_owned(), uri.to_owned())
        }
        _ => (rt.block_on(service.mcp_resource_server(which))?, which.to_owned()),
    };
    let attached = rt.block_on(service.mcp_attach_resource(&server, &uri))?;
    eprintln!("{}", render::attachment_line(&attached));
    Ok(attached.id)
}
