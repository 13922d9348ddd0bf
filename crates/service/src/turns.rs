//! Turns: preparing one (rows, provider, the person's choices; the engine and the rules every
//! turn follows come from `turn_setup`, as for an agent call), running it with the
//! store's recorder first in line, answering a question again (a new version beside the old) or sending
//! an edited one (a new branch) with the choices it was asked with,
//! stopping, and approvals — remembered here ("for this chat", "always") for every shell alike.
//! A turn's keys (`TurnKeys`) are made when it is prepared: its provider key, its redactor and
//! every agent call inside it read each key once.

use crate::agents::AgentsFile;
use crate::asking::PendingApproval;
use crate::chat_setup::check_setup_choices;
use crate::ipc::{ApprovalChoice, SendRequest, TurnChoices, TurnStarted};
use crate::keys::TurnKeys;
use crate::providers::ResolvedProvider;
use crate::redact::Redactor;
use crate::turn_setup::{Asker, Instructions, TurnSpec};
use crate::{Error, Inner, Result, Service, lock};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::egress::CHAT_DESTINATION_PREFIX;
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{
    ApprovalPolicy, CancellationToken, ChatEvent, Engine, EventSink, FinishReason, Provider, TurnInput, TurnOptions,
    TurnOutcome, Usage,
};
use switchboard_core::{BudgetChoice, BudgetPause};
use switchboard_core::{ElicitationAnswer, ElicitationRequest, SamplingDecision, SamplingRequest};
use switchboard_store::{ProviderProfile, Recorder};

/// The turns running now and the approvals they wait for.
#[derive(Default)]
pub(crate) struct Running {
    turns: Mutex<HashMap<String, CancellationToken>>,
    pub(crate) approvals: Mutex<HashMap<String, PendingApproval>>,
    /// Budget pauses waiting for the UI's choice ([`crate::asking`]).
    pub(crate) budgets: crate::asking::Pending,
    /// What tools' servers asked the person, waiting for the UI's answer ([`crate::asking`]).
    pub(crate) questions: crate::asking::Questions,
}

impl Running {
    /// The turn no longer counts as running; stopping it is then a no-op.
    fn deregister(&self, message_id: &str) {
        lock(&self.turns).remove(message_id);
    }
}

/// A turn ready to run: rows created, provider and engine built.
pub struct PreparedTurn {
    /// The ids of the turn's rows.
    pub started: TurnStarted,
    input: TurnInput,
    provider: Box<dyn Provider>,
    engine: Engine,
    recorder: Recorder,
    cancel: CancellationToken,
    profile: ProviderProfile,
    redactor: Redactor,
}

impl std::fmt::Debug for PreparedTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedTurn").field("started", &self.started).finish_non_exhaustive()
    }
}

impl PreparedTurn {
    /// The token that stops this turn (the CLI wires Ctrl-C to it).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// How a turn went, for shells that wait for it (the CLI).
#[derive(Debug)]
pub struct TurnReport {
    /// The ids of the turn's rows.
    pub started: TurnStarted,
    /// The engine's outcome.
    pub outcome: TurnOutcome,
    /// The provider profile used.
    pub profile: ProviderProfile,
    /// Set when the answer could not be saved.
    pub storage_error: Option<Error>,
}

/// Known secret values masked (a server may quote a key back in an error or a tool result),
/// then the recorder (durability), then the shell's sink. Provider state is for the store only:
/// no shell shows it, and a page has no use for a response's signed or encrypted data.
struct Fanout {
    redactor: Redactor,
    recorder: Recorder,
    shell: Arc<dyn EventSink>,
    inner: Arc<Inner>,
    message_id: String,
}

impl EventSink for Fanout {
    fn emit(&self, event: ChatEvent) {
        let event = self.redactor.redact_event(event);
        let done = matches!(event, ChatEvent::Done { .. });
        self.recorder.emit(event.clone());
        if done {
            // Whoever hears `Done` may at once open the conversation or start the next turn: the
            // answer is on disk and the turn no longer counts as running before the shell hears it.
            self.recorder.flush();
            self.inner.turns.deregister(&self.message_id);
        }
        if !matches!(event, ChatEvent::ProviderState { .. }) {
            self.shell.emit(event);
        }
    }

    fn tick(&self) {
        self.recorder.tick();
        self.shell.tick();
    }

    fn flush(&self) {
        self.shell.flush();
    }
}

/// Wraps a shell's approver: "for this chat" and "always" are saved, whichever shell asked.
struct Remembering {
    shell: Arc<dyn Approver>,
    service: Service,
}

impl Approver for Remembering {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let conversation_id = request.conversation_id.clone();
        // The egress question allows a destination, never the tool.
        let tool = match &request.egress {
            Some(reason) => {
                format!("{CHAT_DESTINATION_PREFIX}{}", switchboard_core::egress::normal_host(&reason.destination))
            }
            None => request.name.clone(),
        };
        let egress = request.egress.is_some();
        // The shell's approver registers the question now, before the event goes out.
        let pending = self.shell.decide(request);
        async move {
            let mut decision = pending.await;
            if egress && decision == ApprovalDecision::Always {
                // Not a tool's policy: the destination for this chat.
                decision = ApprovalDecision::ForChat;
            }
            if let Err(e) = self.service.remember_approval(&conversation_id, &tool, decision) {
                // The decision still holds for this turn; only remembering it failed.
                tracing::error!("the approval of '{tool}' could not be saved: {e}");
            }
            decision
        }
        .boxed()
    }

    fn budget(&self, pause: BudgetPause) -> BoxFuture<'_, BudgetChoice> {
        let pending = self.shell.budget(pause.clone());
        async move {
            let choice = pending.await;
            if let Err(e) = self.service.raise_chat_budget(&pause, choice) {
                // The new allowance still holds for this turn; only keeping it for the chat failed.
                tracing::error!("the chat's raised budget could not be saved: {e}");
            }
            choice
        }
        .boxed()
    }

    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationAnswer> {
        self.shell.elicit(request)
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingDecision> {
        self.shell.sample(request)
    }
}

impl Service {
    /// Creates the turn's rows and everything it needs. Fails before any row is written when the
    /// provider, model or key is missing.
    pub fn prepare(&self, request: SendRequest) -> Result<PreparedTurn> {
        if request.text.trim().is_empty() {
            return Err(Error::config("The message is empty."));
        }
        let mut choices = request.choices();
        // An existing chat runs with its setup where the request leaves a choice open.
        let profile_gone = match request.conversation_id.as_deref() {
            Some(id) => self.fill_from_setup(id, &mut choices, request.toolsets.is_some())?,
            None => None,
        };
        check_setup_choices(&mut choices)?;
        let mut agent = self.turn_agent(request.conversation_id.as_deref(), &mut choices)?;
        agent.gone = agent.gone.into_iter().chain(profile_gone).reduce(|a, b| format!("{a} {b}"));
        let keys = self.turn_keys();
        let resolved = self.provider_factory().resolve_with(&choices, &keys)?;
        self.begin(
            Placement::Next(request.conversation_id.as_deref()),
            &request.text,
            &request.disable_for_chat,
            choices,
            (resolved, keys),
            agent,
        )
    }

    /// Prepares another answer to a question, beside its earlier ones (kept as versions):
    /// `message_id` names the answer to replace or its question (`None`: the current path's last
    /// question). With `choices` when given, else exactly the choices it was asked with.
    /// Everything is checked before anything is written; refused while an answer streams in the
    /// conversation.
    pub fn prepare_regenerate(
        &self,
        conversation_id: &str,
        message_id: Option<&str>,
        choices: Option<TurnChoices>,
    ) -> Result<PreparedTurn> {
        let question = self.question(conversation_id, message_id)?;
        let place = Placement::Answer { conversation_id, question: &question.id };
        self.prepare_again(place, &question, &question.text, choices)
    }

    /// Prepares an edited question: a new version of the person's message `message_id` with
    /// `text`, and its answer, on a new branch (the old one is kept). With `choices` when given,
    /// else the ones the message was asked with. Refused while an answer streams.
    pub fn prepare_edit(
        &self,
        conversation_id: &str,
        message_id: &str,
        text: &str,
        choices: Option<TurnChoices>,
    ) -> Result<PreparedTurn> {
        if text.trim().is_empty() {
            return Err(Error::config("The message is empty."));
        }
        let question = self.inner.store.question(conversation_id, message_id)?;
        if question.id != message_id {
            return Err(Error::config("Only your own messages can be edited; regenerate an answer instead."));
        }
        let place = Placement::Edit { conversation_id, question: message_id };
        self.prepare_again(place, &question, text, choices)
    }

    /// An edited question or another answer, asked with `choices` when given, else the ones
    /// `question` was asked with, over the chat's setup. Everything is checked before anything
    /// is written; refused while an answer streams in the conversation.
    fn prepare_again(
        &self,
        place: Placement<'_>,
        question: &switchboard_store::Question,
        text: &str,
        choices: Option<TurnChoices>,
    ) -> Result<PreparedTurn> {
        let conversation_id = place.conversation_id().unwrap_or_default();
        self.inner.store.ensure_idle(conversation_id)?;
        let given = choices.is_some();
        let mut choices = choices.unwrap_or_else(|| choices_of(question));
        self.regenerate_with_setup(conversation_id, &mut choices, given)?;
        check_setup_choices(&mut choices)?;
        let agent = self.turn_agent(Some(conversation_id), &mut choices)?;
        let keys = self.turn_keys();
        let resolved = self.provider_factory().resolve_with(&choices, &keys)?;
        self.begin(place, text, &[], choices, (resolved, keys), agent)
    }

    /// The choices the last question on the conversation's current path was asked with.
    pub fn last_choices(&self, conversation_id: &str) -> Result<TurnChoices> {
        self.question_choices(conversation_id, None)
    }

    /// The choices the question `message_id` names (itself, or the one an answer answers) was
    /// asked with; `None`: the current path's last question.
    pub fn question_choices(&self, conversation_id: &str, message_id: Option<&str>) -> Result<TurnChoices> {
        Ok(choices_of(&self.question(conversation_id, message_id)?))
    }

    /// The question `message_id` names (itself, or the one an answer answers); `None`: the
    /// current path's last question.
    fn question(&self, conversation_id: &str, message_id: Option<&str>) -> Result<switchboard_store::Question> {
        let store = &self.inner.store;
        Ok(match message_id {
            Some(id) => store.question(conversation_id, id)?,
            None => store.last_question(conversation_id)?,
        })
    }

    /// The agent a turn runs: the one chosen for a new chat, else the chat's. Its profile and
    /// model fill the choices the person left open. An agent that no longer exists leaves a
    /// plain chat, said at the start of the turn.
    fn turn_agent(&self, conversation_id: Option<&str>, choices: &mut TurnChoices) -> Result<TurnAgent> {
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

    /// Writes the turn's rows and builds it ([`Service::build_turn`]); `resolved` came from
    /// `keys`, the turn's. A failure once the rows are written ends the new answer as an error
    /// with the failure's message ([`Service::abandon`]): the question stays, and nothing is left
    /// `streaming` to hold the chat busy.
    fn begin(
        &self,
        place: Placement<'_>,
        text: &str,
        disable_for_chat: &[String],
        choices: TurnChoices,
        (resolved, keys): (ResolvedProvider, Arc<TurnKeys>),
        agent: TurnAgent,
    ) -> Result<PreparedTurn> {
        let store = &self.inner.store;
        let conversation_id = place.conversation_id();
        let settings = self.settings()?;
        let mut choices = choices;
        if let Some(extra) = &choices.system_prompt {
            crate::settings::check_instructions(extra, "The system prompt")?;
        }
        // A new chat keeps the system prompt it was started with as its own instructions, so
        // every later turn (and a restart) runs with them.
        let chat_instructions = match conversation_id {
            Some(id) => store.instructions(id)?,
            None => choices.system_prompt.take(),
        };
        let system_prompt = Instructions::Chat {
            custom: &settings.chats.instructions,
            agent: agent.config.as_ref().map(|a| a.instructions.as_str()),
            chat: chat_instructions.as_deref(),
            turn: choices.system_prompt.as_deref(),
        }
        .system_prompt();
        // Stored resolved, so asking again uses this profile and model even if the defaults change.
        let (profile, model) = (&resolved.profile, &resolved.model);
        let stored = TurnChoices {
            provider: Some(profile.name.clone()),
            model: Some(model.clone()),
            sent_instructions: system_prompt.clone(),
            ..choices.clone()
        };
        let stored = serde_json::to_string(&stored)
            .map_err(|e| Error::new(switchboard_core::ErrorKind::Internal, e.to_string()))?;
        let answering = (profile.name.as_str(), model.as_str());
        let rows = match place {
            Placement::Next(id) => store.begin_turn_with(id, text, &profile.name, model, Some(&stored), &[])?,
            Placement::Edit { conversation_id, question } => {
                store.begin_edit(conversation_id, question, text, answering, Some(&stored), &[])?
            }
            Placement::Answer { conversation_id, question } => {
                store.begin_answer(conversation_id, question, answering, Some(&stored))?
            }
        };
        let message_id = rows.message_id.clone();
        let redactor = keys.redactor().clone();
        let begun = Begun {
            rows,
            new_chat: conversation_id.is_none(),
            chat_instructions,
            disable_for_chat,
            choices,
            resolved,
            keys,
            settings,
            agent,
            system_prompt,
        };
        self.build_begun(begun).inspect_err(|e| self.abandon(&message_id, e, &redactor))
    }

    /// The rest of [`Service::begin`], once the turn's rows are written: the new chat's settings,
    /// the chat's setup, the engine and the history.
    fn build_begun(&self, begun: Begun<'_>) -> Result<PreparedTurn> {
        let store = &self.inner.store;
        let Begun { rows, new_chat, chat_instructions, disable_for_chat, choices, .. } = begun;
        let Begun { resolved, keys, settings, agent, system_prompt, .. } = begun;
        let ResolvedProvider { profile, model, provider } = resolved;
        if new_chat && chat_instructions.is_some() {
            store.set_instructions(&rows.conversation_id, chat_instructions.as_deref())?;
        }
        if new_chat && choices.agent.is_some() {
            store.set_agent(&rows.conversation_id, choices.agent.as_deref())?;
        }
        self.remember_setup(&rows.conversation_id, &choices, &profile.name, &model)?;
        if !disable_for_chat.is_empty() {
            let mut set = store.disabled_tools(&rows.conversation_id)?;
            set.extend(disable_for_chat.iter().cloned());
            store.set_disabled_tools(&rows.conversation_id, &set)?;
        }
        let built = self.build_turn(TurnSpec {
            keys: &keys,
            settings: &settings,
            profile: &profile,
            model: &model,
            conversation_id: &rows.conversation_id,
            file: &agent.file,
            agent: agent.config.as_ref(),
            above: &[],
            toolsets: &choices.toolsets,
            generation: choices.generation.as_ref(),
            asker: Asker::Person,
        })?;
        let mut options = built.options;
        options.unavailable = agent.gone.into_iter().chain(options.unavailable).collect();
        (options.budget, options.chat_budget) =
            self.turn_budget(&rows.conversation_id, new_chat, &settings, choices.budget)?;
        // Earlier turns' untrusted results go back framed as they were sent, and taint this turn;
        // the hosts the person named in the chat are destinations they have used. Judged by every
        // tool the app has, not only those this turn offers: an earlier turn may have used others.
        // Results longer than the limit are cut as the live turn cut them.
        let registry = self.inner.tools.catalog.registry();
        let marker = crate::untrusted::Marker::new(&registry);
        let limit = settings.engine_config().tool_result_limit;
        let turn = store.turn_history(&rows.conversation_id, &|call| marker.mark(call), limit)?;
        let history = turn.messages;
        options.exposure.untrusted = turn.untrusted;
        // The history is sent as the latest compaction on this path says, pins verbatim.
        options.compaction = turn.compaction;
        options.pinned = turn.pinned;
        for message in &history {
            if let switchboard_core::Message::User { text, .. } = message {
                options.exposure.learn_from_person(text);
            }
        }
        let input = TurnInput {
            conversation_id: rows.conversation_id.clone(),
            user_message_id: rows.user_message_id.clone(),
            message_id: rows.message_id.clone(),
            provider_name: profile.name.clone(),
            model,
            system_prompt,
            history,
            options: TurnOptions {
                use_tools: choices.use_tools,
                forced: choices.forced,
                disabled_for_chat: store.disabled_tools(&rows.conversation_id)?,
                dry_run: choices.dry_run,
                max_iterations: choices.max_iterations,
                ..options
            },
        };
        let cancel = CancellationToken::new();
        lock(&self.inner.turns.turns).insert(rows.message_id.clone(), cancel.clone());
        Ok(PreparedTurn {
            started: TurnStarted {
                conversation_id: rows.conversation_id,
                message_id: rows.message_id.clone(),
                user_message_id: rows.user_message_id,
            },
            input,
            provider,
            engine: built.engine,
            recorder: store.recorder(&rows.message_id),
            cancel,
            profile,
            redactor: keys.redactor().clone(),
        })
    }

    /// Ends the answer `message_id` of a turn that could not be built after its rows were
    /// written, as the engine ends a failed turn: status `error`, with `e`'s message. If even that
    /// cannot be stored, start-up recovery marks it interrupted.
    fn abandon(&self, message_id: &str, e: &Error, redactor: &Redactor) {
        let recorder = self.inner.store.recorder(message_id);
        recorder.emit(ChatEvent::Error {
            kind: e.kind,
            message: redactor.redact(&e.message).into_owned(),
            retryable: false,
            detail: None,
        });
        recorder.emit(ChatEvent::Done {
            finish_reason: FinishReason::Error,
            usage: Usage::default(),
            tool_calls_made: 0,
        });
        if let Some(stored) = recorder.take_error() {
            tracing::error!(message_id, "the answer of a turn that could not start stays streaming: {stored}");
        }
    }

    /// Runs a prepared turn to its end. Events go to the recorder, then to `sink`; the shell's
    /// `approver` is asked about `ask` tools, and what it answers for the chat or for always is
    /// remembered.
    pub async fn run(&self, turn: PreparedTurn, sink: Arc<dyn EventSink>, approver: Arc<dyn Approver>) -> TurnReport {
        let PreparedTurn { started, input, provider, engine, recorder, cancel, profile, redactor } = turn;
        let fanout = Arc::new(Fanout {
            redactor: redactor.clone(),
            recorder,
            shell: sink,
            inner: Arc::clone(&self.inner),
            message_id: started.message_id.clone(),
        });
        let approver = Arc::new(Remembering { shell: approver, service: self.clone() });
        let mut outcome = engine.run_turn(provider.as_ref(), input, fanout.clone(), approver, cancel).await;
        if let Some(e) = &mut outcome.error {
            e.message = redactor.redact(&e.message).into_owned();
            e.detail = e.detail.as_deref().map(|d| redactor.redact(d).into_owned());
        }
        fanout.recorder.flush();
        self.inner.turns.deregister(&started.message_id);
        let storage_error = fanout.recorder.take_error().map(Error::from);
        TurnReport { started, outcome, profile, storage_error }
    }

    /// Runs a prepared turn in the background, asking the UI about approvals (answered through
    /// [`Service::resolve_approval`]).
    fn spawn(&self, turn: PreparedTurn, sink: Arc<dyn EventSink>) -> TurnStarted {
        let started = turn.started.clone();
        let this = self.clone();
        tokio::spawn(async move {
            let approver = Arc::new(crate::asking::UiApprover { inner: Arc::clone(&this.inner) });
            let report = this.run(turn, sink, approver).await;
            if let Some(e) = report.storage_error {
                tracing::error!("the answer could not be saved: {e}");
            }
        });
        started
    }

    /// Starts a turn in the background. Returns as soon as the rows exist; the events follow on
    /// `sink`.
    pub fn send(&self, request: SendRequest, sink: Arc<dyn EventSink>) -> Result<TurnStarted> {
        let turn = self.prepare(request)?;
        Ok(self.spawn(turn, sink))
    }

    /// Answers a question again in the background (see [`Service::prepare_regenerate`]).
    pub fn regenerate(
        &self,
        conversation_id: &str,
        message_id: Option<&str>,
        choices: Option<TurnChoices>,
        sink: Arc<dyn EventSink>,
    ) -> Result<TurnStarted> {
        let turn = self.prepare_regenerate(conversation_id, message_id, choices)?;
        Ok(self.spawn(turn, sink))
    }

    /// Sends an edited question in the background (see [`Service::prepare_edit`]).
    pub fn edit_message(
        &self,
        conversation_id: &str,
        message_id: &str,
        text: &str,
        choices: Option<TurnChoices>,
        sink: Arc<dyn EventSink>,
    ) -> Result<TurnStarted> {
        let turn = self.prepare_edit(conversation_id, message_id, text, choices)?;
        Ok(self.spawn(turn, sink))
    }

    /// Stops a running turn; `false` when it is not running.
    pub fn stop(&self, message_id: &str) -> bool {
        match lock(&self.inner.turns.turns).get(message_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Answers a pending approval (the UI's dialog).
    ///
    /// "Always" would let the tool run without asking from now on: from the page that counts
    /// only once the person agrees where the page cannot answer, so without that it allows this
    /// call once. See [`Service::resolve_approval_confirmed`].
    pub fn resolve_approval(&self, call_id: &str, choice: ApprovalChoice) -> Result<()> {
        self.resolve_approval_confirmed(call_id, choice, &crate::confirm::Refuse)
    }

    /// Answers a pending approval; "always" is kept only if `confirm` agrees (a native dialog),
    /// else the call runs this once.
    pub fn resolve_approval_confirmed(
        &self,
        call_id: &str,
        choice: ApprovalChoice,
        confirm: &dyn crate::confirm::Confirm,
    ) -> Result<()> {
        let Some((tool, egress)) = lock(&self.inner.turns.approvals).get(call_id).map(|p| (p.tool.clone(), p.egress))
        else {
            return Err(Error::config(format!("No tool call '{call_id}' is waiting for approval.")));
        };
        let decision = match choice {
            ApprovalChoice::Once => ApprovalDecision::Once,
            // Allowing a destination for the chat loosens no tool's policy: nothing to confirm.
            ApprovalChoice::Chat | ApprovalChoice::Always if egress => ApprovalDecision::ForChat,
            ApprovalChoice::Chat => ApprovalDecision::ForChat,
            ApprovalChoice::Always => {
                let change = crate::confirm::Widening::ToolApproval {
                    tool,
                    from: ApprovalPolicy::Ask,
                    to: ApprovalPolicy::Auto,
                };
                // Asked before the call is taken off the list: a dialog left open keeps it waiting.
                if confirm.confirm(&[change]) { ApprovalDecision::Always } else { ApprovalDecision::Once }
            }
            ApprovalChoice::Deny => ApprovalDecision::Deny,
        };
        let Some(pending) = lock(&self.inner.turns.approvals).remove(call_id) else {
            // Stopped (or answered) while the person was deciding: nothing waits any more.
            return Ok(());
        };
        // The turn may have been stopped meanwhile; then nobody waits and that is fine.
        let _ = pending.reply.send(decision);
        Ok(())
    }

    /// Saves what an approval means beyond this call: "for this chat" in the conversation,
    /// "always" as the tool's policy in Settings.
    fn remember_approval(&self, conversation_id: &str, tool: &str, decision: ApprovalDecision) -> Result<()> {
        match decision {
            ApprovalDecision::ForChat => Ok(self.inner.store.approve_tool_for_chat(conversation_id, tool)?),
            ApprovalDecision::Always => {
                let mut s = self.settings()?;
                s.tools.approval.insert(tool.to_owned(), ApprovalPolicy::Auto);
                s.save(&self.inner.store)
            }
            ApprovalDecision::Once | ApprovalDecision::Deny => Ok(()),
        }
    }

    /// Message ids of the turns running now.
    pub fn running(&self) -> Vec<String> {
        lock(&self.inner.turns.turns).keys().cloned().collect()
    }
}
/// Where a turn's rows go.
#[derive(Clone, Copy)]
enum Placement<'a> {
    /// A new question under the current path's last message (a new chat when `None`).
    Next(Option<&'a str>),
    /// A new version of the person's message `question`.
    Edit { conversation_id: &'a str, question: &'a str },
    /// Another answer to the person's message `question`.
    Answer { conversation_id: &'a str, question: &'a str },
}

impl Placement<'_> {
    fn conversation_id(&self) -> Option<&str> {
        match *self {
            Placement::Next(id) => id,
            Placement::Edit { conversation_id, .. } | Placement::Answer { conversation_id, .. } => {
                Some(conversation_id)
            }
        }
    }
}

/// The choices a question was asked with, as stored; for questions stored before choices were
/// kept, the profile and model that answered.
fn choices_of(question: &switchboard_store::Question) -> TurnChoices {
    question.turn_options.as_deref().and_then(|json| serde_json::from_str::<TurnChoices>(json).ok()).unwrap_or_else(
        || TurnChoices { provider: question.provider.clone(), model: question.model.clone(), ..TurnChoices::default() },
    )
}

/// What [`Service::begin`] settled before writing a turn's rows, for the rest of the work.
struct Begun<'a> {
    rows: switchboard_store::TurnRows,
    /// The turn starts a new chat.
    new_chat: bool,
    chat_instructions: Option<String>,
    disable_for_chat: &'a [String],
    choices: TurnChoices,
    resolved: ResolvedProvider,
    keys: Arc<TurnKeys>,
    settings: crate::settings::Settings,
    agent: TurnAgent,
    system_prompt: Option<String>,
}

/// The agent a turn runs, and the agents file it came from.
struct TurnAgent {
    file: crate::agents::AgentsFile,
    config: Option<crate::agents::AgentConfig>,
    /// Why the chat's agent is not there any more.
    gone: Option<String>,
}
