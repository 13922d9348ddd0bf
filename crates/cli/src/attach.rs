//! `chat --attach FILE`: each file is read (standard input for `-`, never more than the largest
//! file the service takes) and stored by the service before the message is sent, and said on
//! standard error. A file the service refuses (too big, a type that cannot be sent, an image
//! that does not decode or claims too many pixels, an encrypted PDF) ends the command with its
//! message and exit code 1: nothing is sent.

use crate::CliError;
use std::io::Read;
use std::path::{Path, PathBuf};
use switchboard_service::Service;

/// What `-` names.
const STDIN: &str = "-";

/// The name a file from standard input is stored under.
const STDIN_NAME: &str = "stdin";

/// Stores `files` in order; their ids, for the message.
pub fn attach_all(service: &Service, files: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    if files.iter().filter(|f| f.as_os_str() == STDIN).count() > 1 {
        return Err(CliError::config("Standard input can be attached once (`--attach -`).").into());
    }
    let mut ids = Vec::with_capacity(files.len());
    for file in files {
        let attached = if file.as_os_str() == STDIN {
            let bytes = read_stdin(switchboard_service::turn_parts::MAX_FILE_BYTES)?;
            crate::runtime().block_on(service.attach_bytes(STDIN_NAME, bytes))
        } else {
            crate::runtime().block_on(service.attach_file(file))
        };
        let attachment = attached.map_err(|e| refused(file, e))?;
        eprintln!("{}", crate::render::attachment_line(&attachment));
        ids.push(attachment.id);
    }
    Ok(ids)
}

/// The service's refusal, naming the file.
fn refused(file: &Path, e: switchboard_service::Error) -> CliError {
    let name = if file.as_os_str() == STDIN { "standard input".into() } else { file.display().to_string() };
    CliError { kind: e.kind, message: format!("Could not attach {}: {}", crate::render::safe(&name), e.message) }
}

/// Standard input, at most `max` bytes: more is refused without reading it all.
fn read_stdin(max: u64) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::config(format!("Could not read standard input: {e}")))?;
    if bytes.len() as u64 > max {
        return Err(CliError::config(format!(
            "Could not attach standard input: it holds more than {} MB, the most a file may have.",
            max / (1024 * 1024)
        )));
    }
    if bytes.is_empty() {
        return Err(CliError::config("Could not attach standard input: it is empty."));
    }
    Ok(bytes)
}
