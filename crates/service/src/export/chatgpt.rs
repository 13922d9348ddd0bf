//! ChatGPT's `conversations.json` (its data export) turned into conversation records: pure, no
//! store. Each conversation is a tree (`mapping`: node id → message, parent, children) with a
//! `current_node`; branches become versions and `current_node` the current path.
//!
//! How nodes become messages: hidden nodes (no message, system messages,
//! `is_visually_hidden_from_conversation`, saved context) are passed through; a user node is a
//! user message; the run of other nodes after it (the answer, a tool call written as a message to
//! a recipient, the tool's output, the answer after it) is one assistant message with the calls at
//! their offsets, one assistant version per distinct way down that run. Images and attachments
//! are kept as a text placeholder naming them. Invariant: a tree whose links do not hold (a parent
//! or child that does not exist, a cycle) is refused, naming the conversation.

use super::import::RefusedConversation;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use switchboard_store::{
    ConversationRecord, MessageRecord, MessageStatus, Role, ToolCallRecord, ToolCallStatus, ToolResultRecord,
};

/// The most nodes one conversation may have.
pub const MAX_NODES: usize = 100_000;

/// The profile name imported answers are attributed to.
pub const PROVIDER: &str = "chatgpt";

#[derive(Deserialize)]
struct Conversation {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    update_time: Option<f64>,
    mapping: BTreeMap<String, Node>,
    #[serde(default)]
    current_node: Option<String>,
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    default_model_slug: Option<String>,
    #[serde(default)]
    is_archived: Option<bool>,
}

#[derive(Deserialize)]
struct Node {
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    children: Vec<String>,
}

#[derive(Deserialize)]
struct Message {
    author: Author,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    update_time: Option<f64>,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    recipient: Option<String>,
    #[serde(default)]
    metadata: Value,
}

#[derive(Deserialize)]
struct Author {
    role: String,
    #[serde(default)]
    name: Option<String>,
}

/// Whether `value` (a parsed file) looks like ChatGPT's export: a list of objects with a `mapping`.
pub fn looks_like(value: &Value) -> bool {
    value.as_array().is_some_and(|list| list.first().is_none_or(|c| c.get("mapping").is_some_and(Value::is_object)))
}

/// The conversations of a ChatGPT export, as records, and those that cannot be converted, each
/// with why. `Err`: the file is not a list of conversations.
pub fn convert(value: Value) -> Result<(Vec<ConversationRecord>, Vec<RefusedConversation>), String> {
    let Value::Array(list) = value else {
        return Err("a ChatGPT export is a list of conversations".to_owned());
    };
    let (mut records, mut refused) = (Vec::with_capacity(list.len()), Vec::new());
    for (i, c) in list.into_iter().enumerate() {
        let mut named = RefusedConversation::unreadable(&c, i, String::new());
        let converted = serde_json::from_value::<Conversation>(c)
            .map_err(|e| format!("it is not in ChatGPT's format: {e}"))
            .and_then(one);
        match converted {
            Ok(Some(record)) => records.push(record),
            // A conversation with nothing shown (only hidden system context) is left out.
            Ok(None) => {}
            Err(reason) => {
                named.reason = reason;
                refused.push(named);
            }
        }
    }
    Ok((records, refused))
}

fn millis(seconds: Option<f64>) -> Option<i64> {
    #[allow(clippy::cast_possible_truncation)]
    seconds.filter(|s| s.is_finite() && *s >= 0.0).map(|s| (s * 1000.0).round() as i64)
}

/// A stable id for a conversation without one (FNV-1a of what identifies it).
fn fallback_id(c: &Conversation) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let key = format!("{:?}|{:?}|{}", c.title, c.create_time, c.mapping.keys().cloned().collect::<Vec<_>>().join(","));
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hidden,
    User,
    Other,
}

fn content_type(m: &Message) -> &str {
    m.content.get("content_type").and_then(Value::as_str).unwrap_or("text")
}

fn kind(node: &Node) -> Kind {
    let Some(m) = &node.message else { return Kind::Hidden };
    let hidden = m.metadata.get("is_visually_hidden_from_conversation").and_then(Value::as_bool) == Some(true)
        || matches!(content_type(m), "user_editable_context" | "model_editable_context")
        || m.author.role == "system";
    if hidden {
        return Kind::Hidden;
    }
    let blank = render(m).trim().is_empty() && m.author.role != "tool" && !is_call(m);
    match m.author.role.as_str() {
        _ if blank => Kind::Hidden,
        "user" => Kind::User,
        _ => Kind::Other,
    }
}

fn is_call(m: &Message) -> bool {
    m.author.role == "assistant" && m.recipient.as_deref().is_some_and(|r| r != "all")
}

/// A message's content as text; images and other non-text parts as a placeholder naming them.
fn render(m: &Message) -> String {
    let c = &m.content;
    let field = |name: &str| c.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut text = match content_type(m) {
        "text" | "multimodal_text" => {
            let parts = c.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            parts.iter().map(part).filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n")
        }
        "code" | "execution_output" => field("text"),
        "tether_browsing_display" => {
            let summary = field("summary");
            let result = field("result");
            if summary.is_empty() { result } else { format!("{summary}\n\n{result}") }
        }
        "tether_quote" => format!("> {}\n\n— {} ({})", field("text"), field("title"), field("url")),
        "system_error" => format!("{}: {}", field("name"), field("text")),
        "thoughts" => c
            .get("thoughts")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter().filter_map(|t| t.get("content").and_then(Value::as_str)).collect::<Vec<_>>().join("\n\n")
            })
            .unwrap_or_default(),
        "reasoning_recap" => field("content"),
        other => match (c.get("text").and_then(Value::as_str), c.get("parts").and_then(Value::as_array)) {
            (Some(t), _) => t.to_owned(),
            (None, Some(parts)) => parts.iter().map(part).collect::<Vec<_>>().join("\n"),
            (None, None) => format!("[{other}]"),
        },
    };
    if let Some(files) = m.metadata.get("attachments").and_then(Value::as_array) {
        for f in files {
            if let Some(name) = f.get("name").and_then(Value::as_str) {
                text.push_str(&format!("\n[attachment: {name}]"));
            }
        }
    }
    text
}

/// One part of a `parts` list: text as is, an image as `[image: name]`.
fn part(p: &Value) -> String {
    match p {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let kind = o.get("content_type").and_then(Value::as_str).unwrap_or("part");
            match kind {
                "image_asset_pointer" => {
                    let pointer = o.get("asset_pointer").and_then(Value::as_str).unwrap_or("image");
                    let name = pointer.rsplit('/').next().unwrap_or(pointer);
                    match (o.get("width").and_then(Value::as_u64), o.get("height").and_then(Value::as_u64)) {
                        (Some(w), Some(h)) => format!("[image: {name}, {w}×{h}]"),
                        _ => format!("[image: {name}]"),
                    }
                }
                "audio_transcription" => o.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
                other => format!("[{other}]"),
            }
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// An assistant message being assembled from a run of nodes.
#[derive(Clone, Default)]
struct Turn {
    content: String,
    reasoning: String,
    calls: Vec<ToolCallRecord>,
    model: Option<String>,
    created: Option<i64>,
    updated: Option<i64>,
    error: Option<String>,
}

impl Turn {
    fn add(&mut self, m: &Message) {
        let at = millis(m.create_time);
        self.created = self.created.or(at);
        self.updated = millis(m.update_time).or(at).or(self.updated);
        if let Some(slug) = m.metadata.get("model_slug").and_then(Value::as_str) {
            self.model = Some(slug.to_owned());
        }
        let text = render(m);
        match (m.author.role.as_str(), content_type(m)) {
            (_, "thoughts" | "reasoning_recap") => push_para(&mut self.reasoning, &text),
            (_, "system_error") => self.error = Some(text),
            ("assistant", _) if is_call(m) => {
                let arguments = match serde_json::from_str::<Value>(&text) {
                    Ok(v @ Value::Object(_)) => v.to_string(),
                    _ => json!({ "input": text }).to_string(),
                };
                let n = self.calls.len();
                self.calls.push(ToolCallRecord {
                    id: String::new(),
                    call_id: format!("call_{}", n + 1),
                    iteration: u32::try_from(n + 1).unwrap_or(u32::MAX),
                    index: 0,
                    name: m.recipient.clone().unwrap_or_default(),
                    source: json!({ "kind": "unknown" }),
                    arguments,
                    text_offset: self.content.chars().count() as u64,
                    status: ToolCallStatus::Cancelled,
                    created_at: at.unwrap_or_default(),
                    nested: None,
                    result: None,
                });
            }
            ("tool", _) => {
                let name = m.author.name.clone().unwrap_or_else(|| "tool".to_owned());
                let open = self
                    .calls
                    .iter()
                    .rposition(|c| c.result.is_none() && c.name == name)
                    .or_else(|| self.calls.iter().rposition(|c| c.result.is_none()));
                let index = match open {
                    Some(i) => i,
                    None => {
                        // Output without a call before it (browsing shown on its own): a call of its own.
                        let n = self.calls.len();
                        self.calls.push(ToolCallRecord {
                            id: String::new(),
                            call_id: format!("call_{}", n + 1),
                            iteration: u32::try_from(n + 1).unwrap_or(u32::MAX),
                            index: 0,
                            name,
                            source: json!({ "kind": "unknown" }),
                            arguments: "{}".to_owned(),
                            text_offset: self.content.chars().count() as u64,
                            status: ToolCallStatus::Cancelled,
                            created_at: at.unwrap_or_default(),
                            nested: None,
                            result: None,
                        });
                        n
                    }
                };
                let call = &mut self.calls[index];
                call.status = ToolCallStatus::Ok;
                call.result = Some(ToolResultRecord {
                    status: "ok".to_owned(),
                    output: text,
                    duration_ms: 0,
                    created_at: at.unwrap_or(call.created_at),
                    images: None,
                });
            }
            _ => push_para(&mut self.content, &text),
        }
    }

    fn into_record(
        mut self,
        id: String,
        parent: Option<String>,
        seq: i64,
        fallback_time: i64,
        model: Option<&str>,
    ) -> MessageRecord {
        let created = self.created.unwrap_or(fallback_time);
        // A call node shared by several versions gets a row in each.
        for (i, call) in self.calls.iter_mut().enumerate() {
            call.id = format!("{id}-call-{}", i + 1);
        }
        MessageRecord {
            id,
            parent_id: parent,
            chosen_at: 0,
            seq,
            role: Role::Assistant,
            content: self.content,
            reasoning: self.reasoning,
            status: if self.error.is_some() { MessageStatus::Error } else { MessageStatus::Complete },
            provider: Some(PROVIDER.to_owned()),
            model: self.model.or_else(|| model.map(str::to_owned)),
            finish_reason: Some(if self.error.is_some() { "error" } else { "stop" }.to_owned()),
            usage: switchboard_core::Usage::default(),
            tool_calls_made: u32::try_from(self.calls.len()).unwrap_or(u32::MAX),
            error: self.error.map(|message| switchboard_store::ErrorRecord {
                kind: Some("server".to_owned()),
                message: Some(message),
                detail: None,
            }),
            notices: json!([]),
            provider_response_id: None,
            turn_options: None,
            provider_state: None,
            created_at: created,
            updated_at: self.updated.unwrap_or(created),
            tool_calls: self.calls,
            attachments: Vec::new(),
        }
    }
}

fn push_para(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(text);
}

/// The visible tree of a conversation: each node's visible children, hidden nodes passed through.
struct Tree<'a> {
    nodes: &'a BTreeMap<String, Node>,
    kinds: HashMap<&'a str, Kind>,
}

impl<'a> Tree<'a> {
    /// Visible children of `id` (or the visible roots for `None`), in order.
    fn visible_children(&self, id: Option<&'a str>, roots: &[&'a str]) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut stack: Vec<&'a str> = match id {
            Some(id) => self.children(id).into_iter().rev().collect(),
            None => roots.iter().rev().copied().collect(),
        };
        while let Some(n) = stack.pop() {
            if self.kinds[n] == Kind::Hidden {
                stack.extend(self.children(n).into_iter().rev());
            } else {
                out.push(n);
            }
        }
        out
    }

    /// `id`'s children: those its `children` list names whose parent it is, in that order.
    fn children(&self, id: &'a str) -> Vec<&'a str> {
        self.nodes[id]
            .children
            .iter()
            .filter_map(|c| self.nodes.get_key_value(c.as_str()))
            .filter(|(_, n)| n.parent.as_deref() == Some(id))
            .map(|(k, _)| k.as_str())
            .collect()
    }
}

fn one(c: Conversation) -> Result<Option<ConversationRecord>, String> {
    if c.mapping.len() > MAX_NODES {
        return Err(format!("it has {} messages; at most {MAX_NODES} can be imported", c.mapping.len()));
    }
    // Links: every parent and child named must exist, and every node must hang from a root.
    for (id, node) in &c.mapping {
        if let Some(p) = node.parent.as_ref().filter(|p| !c.mapping.contains_key(*p)) {
            return Err(format!("message '{id}' follows '{p}', which does not exist"));
        }
        if let Some(missing) = node.children.iter().find(|ch| !c.mapping.contains_key(ch.as_str())) {
            return Err(format!("message '{id}' lists a reply '{missing}' that does not exist"));
        }
    }
    let appends = check_links(&c.mapping)?;
    let mut c = c;
    for (parent, extra) in appends {
        if let Some(n) = c.mapping.get_mut(&parent) {
            n.children.extend(extra);
        }
    }
    let roots: Vec<&str> = c.mapping.iter().filter(|(_, n)| n.parent.is_none()).map(|(k, _)| k.as_str()).collect();
    let source_id = c.conversation_id.clone().or_else(|| c.id.clone()).unwrap_or_else(|| fallback_id(&c));
    let id = format!("chatgpt-{source_id}");
    let created = millis(c.create_time).unwrap_or_default();
    let updated = millis(c.update_time).unwrap_or(created);
    let kinds: HashMap<&str, Kind> = c.mapping.iter().map(|(k, n)| (k.as_str(), kind(n))).collect();
    let tree = Tree { nodes: &c.mapping, kinds };
    let instructions = c
        .mapping
        .values()
        .filter_map(|n| n.message.as_ref())
        .filter(|m| m.author.role == "system")
        .filter(|m| m.metadata.get("is_visually_hidden_from_conversation").and_then(Value::as_bool) != Some(true))
        .map(render)
        .find(|t| !t.trim().is_empty());

    let mut messages: Vec<MessageRecord> = Vec::new();
    // ChatGPT node id → the message that shows it (for `current_node`).
    let mut shown_by: HashMap<&str, String> = HashMap::new();
    // (visible node, the message it follows), depth first so parents get smaller positions.
    let mut work: Vec<(&str, Option<String>)> =
        tree.visible_children(None, &roots).into_iter().rev().map(|n| (n, None)).collect();
    while let Some((node_id, parent)) = work.pop() {
        let seq = i64::try_from(messages.len()).unwrap_or(i64::MAX) + 1;
        let node = &c.mapping[node_id];
        if tree.kinds[node_id] == Kind::User {
            let Some(m) = &node.message else { continue };
            let mid = format!("{id}-{node_id}");
            let at = millis(m.create_time).unwrap_or(created);
            messages.push(MessageRecord {
                id: mid.clone(),
                parent_id: parent,
                chosen_at: 0,
                seq,
                role: Role::User,
                content: render(m),
                reasoning: String::new(),
                status: MessageStatus::Complete,
                provider: None,
                model: None,
                finish_reason: None,
                usage: switchboard_core::Usage::default(),
                tool_calls_made: 0,
                error: None,
                notices: json!([]),
                provider_response_id: None,
                turn_options: None,
                provider_state: None,
                created_at: at,
                updated_at: millis(m.update_time).unwrap_or(at),
                tool_calls: Vec::new(),
                attachments: Vec::new(),
            });
            shown_by.insert(node_id, mid.clone());
            for child in tree.visible_children(Some(node_id), &roots).into_iter().rev() {
                work.push((child, Some(mid.clone())));
            }
            continue;
        }
        // A run of answer nodes: one assistant version per way down it, ending where a question
        // follows or the run ends.
        let mut ends: Vec<(Turn, &str, Vec<&str>)> = Vec::new();
        let mut paths: Vec<(Turn, &str)> = vec![(Turn::default(), node_id)];
        while let Some((mut turn, at)) = paths.pop() {
            if let Some(m) = &c.mapping[at].message {
                turn.add(m);
            }
            let next = tree.visible_children(Some(at), &roots);
            let (questions, answers): (Vec<&str>, Vec<&str>) =
                next.into_iter().partition(|n| tree.kinds[n] == Kind::User);
            if !questions.is_empty() || answers.is_empty() {
                ends.push((turn.clone(), at, questions));
            }
            for a in answers.into_iter().rev() {
                paths.push((turn.clone(), a));
            }
        }
        for (turn, end, questions) in ends {
            let seq = i64::try_from(messages.len()).unwrap_or(i64::MAX) + 1;
            let mid = format!("{id}-{end}");
            messages.push(turn.into_record(mid.clone(), parent.clone(), seq, created, c.default_model_slug.as_deref()));
            shown_by.entry(end).or_insert_with(|| mid.clone());
            for q in questions.into_iter().rev() {
                work.push((q, Some(mid.clone())));
            }
        }
    }
    if messages.is_empty() {
        return Ok(None);
    }
    let head = current_path_head(&c, &tree, &shown_by, &messages);
    let mut record = ConversationRecord {
        id,
        title: c.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| {
            messages
                .iter()
                .find(|m| m.role == Role::User)
                .map_or_else(|| "Imported conversation".to_owned(), |m| switchboard_store::title_from(&m.content))
        }),
        created_at: created,
        updated_at: updated,
        pinned: false,
        archived: c.is_archived.unwrap_or(false),
        instructions,
        agent: None,
        disabled_tools: Default::default(),
        approved_tools: Default::default(),
        head_id: Some(head.clone()),
        setup: None,
        messages,
        attachments: Vec::new(),
    };
    mark_path(&mut record, &head, updated.max(1));
    Ok(Some(record))
}

/// Checks that every node hangs from a root (no cycle); returns, per parent, the children that
/// name it but that it does not list (an inconsistent file), in time order, to append.
fn check_links(mapping: &BTreeMap<String, Node>) -> Result<Vec<(String, Vec<String>)>, String> {
    let roots: Vec<&str> = mapping.iter().filter(|(_, n)| n.parent.is_none()).map(|(k, _)| k.as_str()).collect();
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, node) in mapping {
        if let Some(p) = &node.parent {
            children.entry(p.as_str()).or_default().push(id.as_str());
        }
    }
    let mut reached = 0usize;
    let mut stack = roots;
    while let Some(n) = stack.pop() {
        reached += 1;
        stack.extend(children.get(n).into_iter().flatten().copied());
    }
    if reached < mapping.len() {
        return Err("its messages' parent links form a cycle".to_owned());
    }
    let mut appends = Vec::new();
    for (parent, kids) in &children {
        let listed = &mapping[*parent].children;
        let mut extra: Vec<(&str, f64)> = kids
            .iter()
            .filter(|k| !listed.iter().any(|l| l == *k))
            .map(|k| (*k, mapping[*k].message.as_ref().and_then(|m| m.create_time).unwrap_or(0.0)))
            .collect();
        if !extra.is_empty() {
            extra.sort_by(|a, b| a.1.total_cmp(&b.1));
            appends.push(((*parent).to_owned(), extra.into_iter().map(|(k, _)| k.to_owned()).collect()));
        }
    }
    Ok(appends)
}

/// The message `current_node` is shown in (its nearest shown ancestor if hidden), then down the
/// latest versions to a leaf; the last message when there is no `current_node`.
fn current_path_head(
    c: &Conversation,
    tree: &Tree<'_>,
    shown_by: &HashMap<&str, String>,
    messages: &[MessageRecord],
) -> String {
    let mut at = c.current_node.as_deref().filter(|n| c.mapping.contains_key(*n));
    let mut found = None;
    let mut steps = 0;
    while let Some(n) = at {
        if let Some(m) = shown_by.get(n) {
            found = Some(m.clone());
            break;
        }
        // A node inside a run (not its end): the first version that ends below it.
        if tree.kinds.get(n) == Some(&Kind::Other) {
            let mut stack = vec![n];
            while let Some(x) = stack.pop() {
                if let Some(m) = shown_by.get(x) {
                    found = Some(m.clone());
                    break;
                }
                stack.extend(tree.children(x).into_iter().rev());
            }
            if found.is_some() {
                break;
            }
        }
        at = c.mapping[n].parent.as_deref();
        steps += 1;
        if steps > MAX_NODES {
            break;
        }
    }
    let Some(mut head) = found.or_else(|| messages.last().map(|m| m.id.clone())) else {
        return String::new();
    };
    // Down to a leaf along the latest versions.
    let mut latest_child: HashMap<&str, &MessageRecord> = HashMap::new();
    for m in messages {
        if let Some(p) = m.parent_id.as_deref() {
            let slot = latest_child.entry(p).or_insert(m);
            if m.seq > slot.seq {
                *slot = m;
            }
        }
    }
    while let Some(child) = latest_child.get(head.as_str()) {
        head = child.id.clone();
    }
    head
}

/// Every message from the root to `head` gets `chosen_at = at`.
fn mark_path(record: &mut ConversationRecord, head: &str, at: i64) {
    let index: HashMap<String, usize> = record.messages.iter().enumerate().map(|(i, m)| (m.id.clone(), i)).collect();
    let mut next = Some(head.to_owned());
    while let Some(id) = next {
        let Some(&i) = index.get(&id) else { break };
        record.messages[i].chosen_at = at;
        next = record.messages[i].parent_id.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::convert;
    use serde_json::json;

    #[test]
    fn a_conversation_with_only_hidden_messages_is_left_out_and_the_others_kept() {
        let hidden = json!({"title": "empty", "mapping": {
            "r": {"id": "r", "message": null, "parent": null, "children": ["s"]},
            "s": {"id": "s", "parent": "r", "children": [], "message": {"author": {"role": "system"},
                  "content": {"content_type": "text", "parts": [""]}, "metadata": {}}}
        }, "current_node": "s", "id": "e1"});
        let shown = json!({"title": "hi", "mapping": {
            "u": {"id": "u", "parent": null, "children": [], "message": {"author": {"role": "user"},
                  "content": {"content_type": "text", "parts": ["hello"]}, "metadata": {}}}
        }, "current_node": "u", "id": "e2"});
        let (records, refused) = convert(json!([hidden, shown])).unwrap();
        assert!(refused.is_empty());
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].id, "chatgpt-e2");
        assert_eq!(records[0].head_id.as_deref(), Some("chatgpt-e2-u"));
    }
}
