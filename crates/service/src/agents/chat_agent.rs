//! The agent a person's chat runs: the one chosen for a new chat, else the chat's; its profile
//! and model fill what the person left open. An agent that no longer exists leaves a plain chat,
//! said at the start of the turn (a new chat naming one that does not exist is refused).

use crate::agents::AgentsFile;
use crate::ipc::TurnChoices;
use crate::{Error, Result, Service};

impl Service {
    /// The agent a turn runs: the one chosen for a new chat, else the chat's. Its profile and
    /// model fill the choices the person left open. An agent that no longer exists leaves a
    /// plain chat, said at the start of the turn.
    pub(crate) fn turn_agent(&self, conversation_id: Option<&str>, choices: &mut TurnChoices) -> Result<TurnAgent> {
        if choices.agent.is_none()
            && let Some(id) = conversation_id
        {
            choices.agent = self.inner.store.agent(id)?;
        }
        let Some(name) = choices.agent.clone() else {
            // The agents file is read only when the turn needs it.
            let file = if choices.toolsets.is_empty() { AgentsFile::default() } else { self.agents_file()? };
            return Ok(TurnAgent { file, config: None, gone: None });
        };
        let file = self.agents_file()?;
        let Some(config) = file.agent(&name).cloned() else {
            if conversation_id.is_none() {
                return Err(Error::new(
                    switchboard_core::ErrorKind::NotFound,
                    format!("There is no agent named '{name}'."),
                ));
            }
            choices.agent = None;
            let gone = format!("The agent '{name}' this chat ran no longer exists; the chat goes on without it.");
            return Ok(TurnAgent { file, config: None, gone: Some(gone) });
        };
        if choices.provider.is_none() {
            choices.provider.clone_from(&config.profile);
            if choices.model.is_none() {
                choices.model.clone_from(&config.model);
            }
        }
        Ok(TurnAgent { file, config: Some(config), gone: None })
    }
}

/// The agent a turn runs, and the agents file it came from.
pub(crate) struct TurnAgent {
    pub(crate) file: crate::agents::AgentsFile,
    pub(crate) config: Option<crate::agents::AgentConfig>,
    /// Why the chat's agent is not there any more.
    pub(crate) gone: Option<String>,
}
