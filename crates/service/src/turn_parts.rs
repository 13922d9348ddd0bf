//! Attachments through a turn. A request names attachments by id only; the service finds what
//! they are in the store ([`Service::turn_attachments`]), refuses what the model cannot take
//! before anything is stored ([`check_model_takes`]), and for every request turns the
//! attachments of the history into the parts of the API it goes to ([`Service::with_parts`]):
//!
//! - an image is fitted to that API's limits (dimensions and bytes; the original stays stored),
//!   or, for a model that cannot see images, left out with a note naming it;
//! - a PDF goes as a document where the model reads PDFs, else as its extracted text with a
//!   note, and the turn says so (a [`switchboard_core::NoticeKind::Attachment`] notice);
//! - a text or code file goes as text under its name.
//!
//! The meter counts the same parts without making them ([`Service::part_tokens`]).
//!
//! Invariants: the parts are made again for each turn from the stored references, so a chat
//! that moves from one API to another sends each its own form; what is held is the fitted
//! images (a bounded cache of them, [`Fitted`]), never the originals beyond one fit; a file
//! that cannot be read any more is left out with a note and a notice, never a failed turn.

use crate::{Error, Result, Service, lock};
use std::collections::VecDeque;
use std::sync::Mutex;
use switchboard_core::machine::{Estimator, pdf_tokens};
use switchboard_core::tokens::{header_size, image_size};
use switchboard_core::{Attachment, AttachmentKind, ErrorKind, Message, Part, ToolImage};
use switchboard_providers::ModelCapabilities;

/// The most files one message may carry.
pub const MAX_ATTACHMENTS: usize = 20;

/// The largest file of any kind the service takes (a shell reading standard input stops there).
pub const MAX_FILE_BYTES: u64 = switchboard_media::MAX_FILE_BYTES;

/// The most bytes of fitted images (base64) kept between turns.
const FITTED_CACHE_BYTES: usize = 48 * 1024 * 1024;

/// What a model is told when a tool's images were not sent to it (live and in rebuilt history
/// alike, so what is sent stays the same from turn to turn).
pub(crate) fn tool_images_left_out(model: &str) -> String {
    format!("(The images this tool returned were left out: {model} can't see images.)")
}

/// The refusal of images for a model that cannot see them, before anything is stored.
pub(crate) fn cannot_see_images(model: &str) -> Error {
    Error::new(ErrorKind::BadRequest, format!("{model} can't see images — remove them or pick another model"))
}

/// Refuses, before anything is stored, attachments `model` is known not to take: images for a
/// model that cannot see. (A PDF goes as its text to a model that reads none.)
pub(crate) fn check_model_takes(model: &str, caps: ModelCapabilities, attachments: &[Attachment]) -> Result<()> {
    if caps.images == Some(false) && attachments.iter().any(|a| a.kind == AttachmentKind::Image) {
        return Err(cannot_see_images(model));
    }
    Ok(())
}

/// Where a request goes: the API (a profile's kind) and the model, and what it can take.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The API kind (`openai`, `openai-responses`, `anthropic`, `gemini`).
    pub(crate) kind: String,
    /// The model.
    pub(crate) model: String,
    /// What the model can take.
    pub(crate) caps: ModelCapabilities,
}

impl Target {
    fn sees_images(&self) -> bool {
        self.caps.images != Some(false)
    }

    fn reads_pdf(&self) -> bool {
        // Unknown: the text (OpenAI-compatible servers mostly refuse `file` parts).
        self.caps.pdf == Some(true)
    }
}

/// The attachments of a turn's history, still to be made into parts (off the async runtime,
/// when the turn runs).
#[derive(Debug)]
pub(crate) struct PendingParts {
    /// Index into the history of each person's message with attachments, and those.
    pub(crate) attached: Vec<(usize, Vec<Attachment>)>,
    /// Where the request goes.
    pub(crate) target: Target,
}

/// Fitted images kept between turns, by attachment and API: a chat's photos are decoded and
/// scaled once, not on every turn. Bounded by [`FITTED_CACHE_BYTES`]; the oldest go first.
#[derive(Default)]
pub(crate) struct Fitted {
    entries: Mutex<VecDeque<(String, ToolImage)>>,
}

impl Fitted {
    fn get(&self, key: &str) -> Option<ToolImage> {
        lock(&self.entries).iter().find(|(k, _)| k == key).map(|(_, image)| image.clone())
    }

    /// What the header of the fitted image under `key` says of its size, if it is kept.
    fn size(&self, key: &str) -> Option<Option<(u32, u32)>> {
        lock(&self.entries).iter().find(|(k, _)| k == key).map(|(_, image)| image_size(image))
    }

    fn put(&self, key: String, image: &ToolImage) {
        if image.data.len() > FITTED_CACHE_BYTES / 4 {
            return;
        }
        let mut entries = lock(&self.entries);
        entries.retain(|(k, _)| *k != key);
        entries.push_back((key, image.clone()));
        let mut total: usize = entries.iter().map(|(_, i)| i.data.len()).sum();
        while total > FITTED_CACHE_BYTES {
            let Some((_, old)) = entries.pop_front() else { break };
            total -= old.data.len();
        }
    }
}

impl Service {
    /// The stored attachments `ids` name, in order (each once), for a person's message. An id
    /// the store does not have (never attached, or removed since) refuses the message.
    pub(crate) fn turn_attachments(&self, ids: &[String]) -> Result<Vec<Attachment>> {
        if ids.len() > MAX_ATTACHMENTS {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("A message can carry at most {MAX_ATTACHMENTS} files; remove some and send again."),
            ));
        }
        let mut found: Vec<Attachment> = Vec::with_capacity(ids.len());
        for id in ids {
            if found.iter().any(|a| a.id == *id) {
                continue;
            }
            let attachment = self.inner.store.attachment(id)?.ok_or_else(|| {
                Error::new(
                    ErrorKind::NotFound,
                    "An attached file is no longer stored (it was removed after it was attached). Nothing was sent: \
                     remove it and attach the file again.",
                )
            })?;
            found.push(attachment);
        }
        Ok(found)
    }

    /// [`Service::turn_attachments`], refused when the model `resolved` names cannot take them.
    pub(crate) fn checked_attachments(
        &self,
        ids: &[String],
        resolved: &crate::providers::ResolvedProvider,
    ) -> Result<Vec<Attachment>> {
        self.checked_for(self.turn_attachments(ids)?, resolved)
    }

    /// `attachments` (a question's, asked again or edited without new ones), refused when the
    /// model `resolved` names cannot take them.
    pub(crate) fn checked_for(
        &self,
        attachments: Vec<Attachment>,
        resolved: &crate::providers::ResolvedProvider,
    ) -> Result<Vec<Attachment>> {
        let caps = self.model_capabilities(&resolved.profile, &resolved.model);
        check_model_takes(&resolved.model, caps, &attachments)?;
        Ok(attachments)
    }

    /// `input`'s history with each person's message's attachments as parts for `pending`'s
    /// target, and the notices the turn gives about them. Runs off the async runtime (decoding
    /// and scaling images is heavy).
    pub(crate) async fn with_parts(
        &self,
        mut input: switchboard_core::TurnInput,
        pending: PendingParts,
    ) -> switchboard_core::TurnInput {
        if pending.attached.is_empty() && pending.target.sees_images() {
            return input;
        }
        let this = self.clone();
        let history = std::mem::take(&mut input.history);
        let question = history.iter().rposition(|m| matches!(m, Message::User { .. }));
        let made = tokio::task::spawn_blocking(move || {
            let mut history = history;
            let notices = this.make_parts(&mut history, &pending, question);
            (history, notices)
        })
        .await;
        match made {
            Ok((history, notices)) => {
                input.history = history;
                input.options.attachment_notices.extend(notices);
            }
            Err(e) => {
                // The history went with the task: nothing can be sent.
                tracing::error!("making a turn's attachments into parts failed: {e}");
                input.options.attachment_notices.push("The attached files could not be prepared.".into());
            }
        }
        input
    }

    /// Puts the parts into `history` (see [`Service::with_parts`]); notices only for the
    /// message at `question` (the turn's own), the earlier ones were said when they were asked.
    fn make_parts(&self, history: &mut [Message], pending: &PendingParts, question: Option<usize>) -> Vec<String> {
        let target = &pending.target;
        let mut notices = Vec::new();
        for (index, attachments) in &pending.attached {
            let Some(Message::User { parts, .. }) = history.get_mut(*index) else { continue };
            let said = (Some(*index) == question).then_some(&mut notices);
            *parts = self.parts_for(attachments, target, said);
        }
        if !target.sees_images() {
            leave_out_tool_images(history, &target.model);
        }
        notices
    }

    /// The tokens of the part [`Service::parts_for`] makes of `a` for `target`, as `estimator`
    /// counts it, told from what the store keeps of it (type, size, dimensions, extracted text)
    /// without reading its file: an image by the size it is fitted to (a fit made this session
    /// when there is one, else [`switchboard_media::ImageLimits::fitted_shape`]), a PDF sent as
    /// a document by its size. Equal to the count of the part itself, but for an image whose
    /// fitted form's header would give a size the stored facts cannot (a WebP in its extended
    /// form, a scaled GIF or WebP with transparency): that counts the upper bound, and a file
    /// that cannot be read any more, which counts as sent until a turn finds it gone.
    pub(crate) fn part_tokens(&self, a: &Attachment, target: &Target, estimator: &Estimator) -> u64 {
        match a.kind {
            AttachmentKind::Image if !target.sees_images() => {
                estimator.part(&left_out(a, &format!("{} can't see images", target.model)))
            }
            AttachmentKind::Image => {
                let size = self.inner.fitted.size(&format!("{}:{}", a.id, target.kind)).unwrap_or_else(|| {
                    let (Some(width), Some(height)) = (a.width, a.height) else { return None };
                    let limits = switchboard_media::ImageLimits::for_api(&target.kind);
                    let shape = limits.fitted_shape(&a.mime_type, width, height, a.size);
                    header_size(shape.mime_type.unwrap_or_default(), shape.width, shape.height)
                });
                estimator.image(size)
            }
            AttachmentKind::Pdf if target.reads_pdf() => pdf_tokens(a.size),
            AttachmentKind::Pdf | AttachmentKind::Text => {
                // Their text is in the database, not in the file.
                let made = crate::attachments::attachment_parts(
                    &self.inner.store,
                    std::slice::from_ref(a),
                    &target.kind,
                    false,
                );
                let part = match made.map(|mut parts| parts.pop()) {
                    Ok(Some(part)) => part,
                    Ok(None) => left_out(a, "it could not be read (nothing could be made of it)"),
                    Err(why) => left_out(a, &format!("it could not be read ({})", why.message)),
                };
                estimator.part(&part)
            }
        }
    }

    /// The parts of one message's attachments for `target`; what is worth saying goes to
    /// `notices` when given.
    fn parts_for(
        &self,
        attachments: &[Attachment],
        target: &Target,
        mut notices: Option<&mut Vec<String>>,
    ) -> Vec<Part> {
        let mut say = |s: String| {
            if let Some(n) = notices.as_deref_mut() {
                n.push(s);
            }
        };
        attachments
            .iter()
            .map(|a| match self.part(a, target) {
                Ok((part, notice)) => {
                    if let Some(n) = notice {
                        say(n);
                    }
                    part
                }
                Err(why) => {
                    say(format!("'{}' was left out: {why}", a.name));
                    left_out(a, &format!("it could not be read ({why})"))
                }
            })
            .collect()
    }

    /// One attachment as a part for `target` (att-media's [`crate::attachments::attachment_parts`],
    /// fitted images kept in [`Fitted`]), and what the turn should say about it.
    fn part(&self, a: &Attachment, target: &Target) -> std::result::Result<(Part, Option<String>), String> {
        let key = format!("{}:{}", a.id, target.kind);
        if a.kind == AttachmentKind::Image {
            if !target.sees_images() {
                return Ok((left_out(a, &format!("{} can't see images", target.model)), None));
            }
            if let Some(image) = self.inner.fitted.get(&key) {
                return Ok((Part::Image { name: a.name.clone(), image }, None));
            }
        }
        let made = crate::attachments::attachment_parts(
            &self.inner.store,
            std::slice::from_ref(a),
            &target.kind,
            target.reads_pdf(),
        )
        .map_err(|e| e.message)?;
        let part = made.into_iter().next().ok_or_else(|| "nothing could be made of it".to_owned())?;
        let notice = match &part {
            Part::Image { image, .. } => {
                self.inner.fitted.put(key, image);
                None
            }
            Part::Text { text, .. } if a.kind == AttachmentKind::Pdf && text.trim().is_empty() => Some(format!(
                "{} reads no PDFs and '{}' has no text to send instead: the model sees only its name.",
                target.model, a.name
            )),
            Part::Text { .. } if a.kind == AttachmentKind::Pdf => Some(format!(
                "{} reads no PDFs, so '{}' was sent as its text (pictures and layout are not).",
                target.model, a.name
            )),
            _ => None,
        };
        Ok((part, notice))
    }
}

/// What a model that cannot see is sent of a tool's images: none, and a note after the result
/// (live and in rebuilt history alike).
pub(crate) fn leave_out_tool_images(history: &mut [Message], model: &str) {
    let note = tool_images_left_out(model);
    for message in history.iter_mut() {
        if let Message::Tool { content, images, .. } = message
            && !images.is_empty()
        {
            images.clear();
            content.push_str("\n\n");
            content.push_str(&note);
        }
    }
}

/// An attachment not sent, as a note under its name.
fn left_out(a: &Attachment, why: &str) -> Part {
    Part::Text {
        name: a.name.clone(),
        mime_type: a.mime_type.clone(),
        text: String::new(),
        note: Some(format!("left out: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attachment(kind: AttachmentKind) -> Attachment {
        Attachment {
            id: "ab".repeat(32),
            name: "shot.png".into(),
            mime_type: "image/png".into(),
            kind,
            size: 10,
            width: Some(1),
            height: Some(1),
            pages: None,
            text_note: None,
        }
    }

    #[test]
    fn a_model_that_cannot_see_is_refused_images_in_its_own_words() {
        let blind = ModelCapabilities { images: Some(false), ..Default::default() };
        let e = check_model_takes("gpt-3.5-turbo", blind, &[attachment(AttachmentKind::Image)]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadRequest);
        assert_eq!(e.message, "gpt-3.5-turbo can't see images — remove them or pick another model");
        assert!(check_model_takes("gpt-3.5-turbo", blind, &[attachment(AttachmentKind::Pdf)]).is_ok());
        let unknown = ModelCapabilities::default();
        assert!(check_model_takes("local", unknown, &[attachment(AttachmentKind::Image)]).is_ok(), "unknown: sent");
    }

    #[test]
    fn earlier_tool_images_are_left_out_for_a_model_that_cannot_see_as_the_live_turn_leaves_them() {
        let service = Service::in_memory().unwrap();
        let image = ToolImage { mime_type: "image/png".into(), data: "iVBORw0KGgo=".into() };
        let tool = Message::Tool {
            call_id: "c".into(),
            name: "snap".into(),
            content: "A picture.".into(),
            is_error: false,
            images: vec![image],
        };
        let mut history = vec![Message::user("snap it"), tool.clone(), Message::user("and?")];
        let caps = ModelCapabilities { images: Some(false), ..Default::default() };
        let blind = Target { kind: "openai".into(), model: "gpt-3.5-turbo".into(), caps };
        let notices = service.make_parts(&mut history, &PendingParts { attached: vec![], target: blind }, Some(2));
        assert!(notices.is_empty());
        let expected = format!("A picture.\n\n{}", tool_images_left_out("gpt-3.5-turbo"));
        assert!(
            matches!(&history[1], Message::Tool { images, content, .. } if images.is_empty() && *content == expected)
        );
        let mut seen = vec![tool.clone()];
        let sees = Target { kind: "anthropic".into(), model: "claude".into(), caps: ModelCapabilities::default() };
        service.make_parts(&mut seen, &PendingParts { attached: vec![], target: sees }, None);
        assert_eq!(seen, [tool], "a model that may see gets them");
    }

    #[test]
    fn the_cache_of_fitted_images_stays_within_its_bound() {
        let fitted = Fitted::default();
        let big = ToolImage { mime_type: "image/png".into(), data: "A".repeat(FITTED_CACHE_BYTES / 5) };
        for i in 0..10 {
            fitted.put(format!("{i}:openai"), &big);
        }
        let total: usize = lock(&fitted.entries).iter().map(|(_, i)| i.data.len()).sum();
        assert!(total <= FITTED_CACHE_BYTES);
        assert!(fitted.get("9:openai").is_some() && fitted.get("0:openai").is_none(), "the oldest go first");
    }
}
