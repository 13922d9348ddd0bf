// Generated from the Rust types by crates/service/tests/bindings.rs. Do not edit.
// Regenerate: UPDATE_BINDINGS=1 cargo test -p switchboard-service --test bindings

export type ErrorKind = "auth" | "rateLimited" | "overloaded" | "contextLength" | "badRequest" | "notFound" | "server" | "network" | "timeout" | "cancelled" | "protocol" | "config" | "storage" | "internal";

export type ToolStatus = "ok" | "error" | "timeout" | "denied" | "skipped" | "cancelled";

export type FinishReason = "stop" | "length" | "contentFilter" | "maxIterations" | "toolTookControl" | "cancelled" | "budget" | "error";

export type NoticeKind = "maxIterations" | "retrying" | "toolUnavailable" | "dryRun" | "filtered" | "tooManyTools" | "budget" | "context" | "attachment";

export type Usage = { 
/**
 * Input tokens.
 */
promptTokens: number, 
/**
 * Output tokens (reasoning included, as providers count them).
 */
completionTokens: number, 
/**
 * Of the output, tokens spent on reasoning.
 */
reasoningTokens: number, 
/**
 * Of the input, tokens served from the provider's prompt cache.
 */
cachedTokens: number, 
/**
 * Of the input, tokens written to the provider's prompt cache (Anthropic bills them apart).
 */
cacheWriteTokens?: number, };

export type ContextBreakdown = { 
/**
 * The system prompt with the tools' prompt snippets.
 */
instructions: number, 
/**
 * The tool definitions offered.
 */
tools: number, 
/**
 * The person's and the model's messages, tool calls included.
 */
history: number, 
/**
 * The text of tool results.
 */
toolResults: number, 
/**
 * Images (tool results' images).
 */
attachments: number, };

export type Prices = { 
/**
 * Input tokens not read from a cache.
 */
input: number, 
/**
 * Output tokens (reasoning too, unless [`Prices::reasoning`] prices it apart).
 */
output: number, 
/**
 * Input tokens read from the provider's prompt cache; `None`: billed as input.
 */
cachedRead?: number, 
/**
 * Input tokens written to the prompt cache; `None`: billed as input.
 */
cacheWrite?: number, 
/**
 * Reasoning tokens where billed apart from output; `None`: billed as output.
 */
reasoning?: number, };

export type Budget = { 
/**
 * Model calls with tools.
 */
steps?: number, 
/**
 * Wall time in seconds.
 */
timeSecs?: number, 
/**
 * Cost in USD.
 */
costUsd?: number, };

export type BudgetKind = "steps" | "time" | "cost" | "stepLimit";

export type BudgetSpent = { 
/**
 * Model calls with tools.
 */
steps: number, 
/**
 * Wall time since the turn began, in milliseconds.
 */
elapsedMs: number, 
/**
 * Cost in USD of the requests with a known price.
 */
costUsd: number, 
/**
 * Some request had no known price: the cost is at least `cost_usd`.
 */
costUnknown: boolean, };

export type BudgetScope = "chat" | "turn";

export type BudgetChoice = { "choice": "continue", 
/**
 * The new allowance.
 */
allowance?: number, } | { "choice": "answerNow" } | { "choice": "stop" };

export type ToolSource = { "kind": "builtin" } | { "kind": "mcp", 
/**
 * The server's configured name.
 */
server: string, } | { "kind": "http" } | { "kind": "openApi", 
/**
 * The document's configured name.
 */
document: string, } | { "kind": "command" } | { "kind": "agent" } | { "kind": "unknown" };

export type ApprovalPolicy = "auto" | "ask" | "deny";

export type ToolImage = { 
/**
 * `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
 */
mimeType: string, 
/**
 * The bytes, base64 (standard alphabet).
 */
data: string, };

export type AttachmentKind = "image" | "pdf" | "text";

export type Attachment = { 
/**
 * The SHA-256 of the original bytes, lower-case hex: the content address.
 */
id: string, 
/**
 * The file's name as attached (never a path), or a resource's URI.
 */
name: string, 
/**
 * The media type, as sniffed from the bytes.
 */
mimeType: string, 
/**
 * How it is sent.
 */
kind: AttachmentKind, 
/**
 * Bytes of the original.
 */
size: number, 
/**
 * An image's width in pixels.
 */
width?: number, 
/**
 * An image's height in pixels.
 */
height?: number, 
/**
 * A PDF's page count.
 */
pages?: number, 
/**
 * Why a PDF's extracted text is not all of it ("text of pages 1–12 of 40 only: extraction
 * stopped after 20 s"); absent when it is all of it (or the file has none).
 */
textNote?: string, };

export type FindingKind = "hiddenInstructions" | "padding" | "invisibleCharacters" | "namesOtherTools" | "asksForSecrets";

export type Finding = { 
/**
 * What kind of problem it is.
 */
kind: FindingKind, 
/**
 * Where and what, for the person ("the description contains `<IMPORTANT>`, text addressed
 * to the model").
 */
reason: string, };

export type EgressReason = { 
/**
 * Where the data would go (a host, or an MCP server).
 */
destination: string, 
/**
 * What would leave (cut to [`SENDS_SHOWN`] characters).
 */
sends: string, 
/**
 * The untrusted source the chat read (a tool's name, `agent__Scout (which read web_fetch)`).
 */
after: string, };

export type ProviderState = { 
/**
 * The provider kind that produced it (`anthropic`, `gemini`, `openai-responses`, ...).
 */
api: string, 
/**
 * The origin (`scheme://host:port`) of the endpoint that produced it.
 */
origin: string, 
/**
 * The API's own data, as its provider module wrote it.
 */
data: unknown, };

export type CompactionReason = "threshold" | "tooLong" | "manual";

export type Compaction = { 
/**
 * How many canonical messages, from the start of the history, the summary stands for
 * (0: no summary).
 */
covered: number, 
/**
 * The summary of those messages.
 */
summary?: string, 
/**
 * Call ids whose results are sent as stubs.
 */
stubbed: Array<string>, 
/**
 * Indexes of covered messages quoted verbatim after the summary (the question of the turn
 * that compacted), besides the pinned ones.
 */
quoted?: Array<number>, };

export type ChatEvent = { "type": "started", 
/**
 * The conversation (new or existing).
 */
conversationId: string, 
/**
 * The assistant message being produced.
 */
messageId: string, 
/**
 * The person's message that started the turn.
 */
userMessageId: string, 
/**
 * Provider profile name.
 */
provider: string, 
/**
 * Model id.
 */
model: string, } | { "type": "textDelta", 
/**
 * The new text.
 */
text: string, } | { "type": "reasoningDelta", 
/**
 * The new text.
 */
text: string, } | { "type": "toolCall", 
/**
 * Provider call id.
 */
id: string, 
/**
 * Registry name of the tool.
 */
name: string, 
/**
 * Where the tool comes from.
 */
source: ToolSource, 
/**
 * Raw argument text as the model sent it.
 */
arguments: string, 
/**
 * Length in Unicode scalar values of the turn's answer text when the call first appeared.
 */
textOffset: number, 
/**
 * 1-based loop iteration.
 */
iteration: number, 
/**
 * 0-based position of the call in its iteration.
 */
index: number, } | { "type": "toolStarted", 
/**
 * Call id.
 */
id: string, } | { "type": "toolProgress", 
/**
 * Call id.
 */
id: string, 
/**
 * Sub-agent instance name, `Name[i]`.
 */
instance?: string | null, 
/**
 * A line of progress text.
 */
text?: string | null, 
/**
 * A nested event of a sub-agent's own turn.
 */
event?: ChatEvent | null, } | { "type": "approvalRequested", 
/**
 * Call id.
 */
id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Where the tool comes from.
 */
source: ToolSource, 
/**
 * The exact arguments that will run.
 */
arguments: string, 
/**
 * What the call will do in the tool's words (a command line, an HTTP request), when the
 * tool says more than its arguments.
 */
preview?: string, 
/**
 * Why it is asked although its policy or a grant would let it run: it would send data
 * to a destination not used in this chat after the chat read untrusted content.
 */
egress?: EgressReason, } | { "type": "approvalResolved", 
/**
 * Call id.
 */
id: string, 
/**
 * Whether the call may run.
 */
approved: boolean, } | { "type": "elicitationRequested", 
/**
 * The call it came during.
 */
callId: string, 
/**
 * The request's id, for `answer_elicitation`.
 */
requestId: string, 
/**
 * The server asking.
 */
server: string, 
/**
 * The server's tool being called.
 */
tool: string, 
/**
 * What the server says it needs.
 */
message: string, 
/**
 * A form, or a page to open.
 */
mode: ElicitationMode, 
/**
 * The form's fields, in order (form mode; only the types the MCP specification allows).
 */
fields: Array<FormField>, 
/**
 * The page to open after the person agrees (URL mode).
 */
url?: string, 
/**
 * Why it was declined without asking (a type the specification does not allow, a URL
 * that is not https).
 */
refused?: string, } | { "type": "elicitationResolved", 
/**
 * The call it came during.
 */
callId: string, 
/**
 * The request's id.
 */
requestId: string, 
/**
 * What went back to the server.
 */
action: ElicitationAction, } | { "type": "samplingRequested", 
/**
 * The call it came during.
 */
callId: string, 
/**
 * The request's id, for `answer_sampling`.
 */
requestId: string, 
/**
 * The server asking.
 */
server: string, 
/**
 * The server's tool being called.
 */
tool: string, 
/**
 * The messages to complete (images and audio named in words).
 */
messages: Array<SamplingMessage>, 
/**
 * The system prompt it asks for.
 */
systemPrompt?: string, 
/**
 * The most output tokens the completion may use (capped).
 */
maxTokens: number, 
/**
 * What the server asked for, when it was more than the cap.
 */
requestedMaxTokens?: number, 
/**
 * The server's model preferences in words (shown, not obeyed).
 */
modelPreferences?: string, } | { "type": "samplingResolved", 
/**
 * The call it came during.
 */
callId: string, 
/**
 * The request's id.
 */
requestId: string, 
/**
 * Whether the completion runs.
 */
approved: boolean, } | { "type": "budgetPaused", 
/**
 * The pause's id, for the answer.
 */
id: string, 
/**
 * The limit reached.
 */
kind: BudgetKind, 
/**
 * Whose limit: the chat's (a running total) or this turn's.
 */
scope: BudgetScope, 
/**
 * What the turn (with its sub-agents) spent so far; for the chat's limit, the chat's
 * total.
 */
spent: BudgetSpent, 
/**
 * The limit of `kind`: steps, seconds or USD.
 */
limit: number, 
/**
 * The estimated cost of the next request's input, when its price is known.
 */
nextCostUsd?: number, } | { "type": "budgetResolved", 
/**
 * The pause's id.
 */
id: string, 
/**
 * What they chose.
 */
choice: BudgetChoice, } | { "type": "toolResult", 
/**
 * Call id.
 */
id: string, 
/**
 * How it ended.
 */
status: ToolStatus, 
/**
 * What the model sees.
 */
output: string, 
/**
 * Wall time of the call.
 */
durationMs: number, 
/**
 * Images the tool returned.
 */
images?: Array<ToolImage>, } | { "type": "providerState", 
/**
 * 1-based loop iteration, as in `toolCall`.
 */
iteration: number, 
/**
 * The data, tagged with the API and endpoint that made it.
 */
state: ProviderState, } | { "type": "usage", 
/**
 * This request's usage (with `agentCall`: the sub-agent run's, its children included).
 */
usage: Usage, 
/**
 * Sum over the turn so far, sub-agent runs included.
 */
total: Usage, 
/**
 * 1-based number of the request within the turn: the `iteration` of the tool calls it
 * decided (with `agentCall`: of the request that decided that call).
 */
request: number, 
/**
 * What it cost in US dollars at the model's prices; `null`: the price is unknown (never
 * taken for free). A local server's requests cost 0.
 */
costUsd: number | null, 
/**
 * The provider reported no usage (or numbers that cannot be true): these are estimated
 * from what was sent and received.
 */
estimated: boolean, 
/**
 * Set when this is the total of a sub-agent call (its id) rather than a request of
 * this turn; it counts in `total`, and its requests are stored from the nested events.
 */
agentCall?: string, } | { "type": "compacted", 
/**
 * The whole compaction now in force (it includes earlier ones).
 */
compaction: Compaction, 
/**
 * Estimated tokens of the next request before compacting.
 */
tokensBefore: number, 
/**
 * And after.
 */
tokensAfter: number, 
/**
 * The model that wrote the summary, when this compaction wrote one.
 */
summariser?: string, 
/**
 * What writing the summary used.
 */
usage?: Usage, 
/**
 * Why the model picked to write summaries did not write this one (its profile is gone,
 * its key is refused, …): `summariser` is the chat's own model instead.
 */
summariserFallback?: string, 
/**
 * Why.
 */
reason: CompactionReason, } | { "type": "context", 
/**
 * Tokens the request sends: the previous request's reported prompt tokens plus an
 * estimate of what is new (an estimate of everything before the first report).
 */
usedTokens: number, 
/**
 * The model's context window, if known.
 */
window: number | null, 
/**
 * Where the tokens go (sums to `used_tokens`).
 */
breakdown: ContextBreakdown, 
/**
 * No provider report is part of `used_tokens`: it is all the engine's own estimate.
 */
estimated: boolean, 
/**
 * The engine's own estimate of the whole request, without any report: stored with the
 * provider's reported prompt tokens, so a later request counts from that report.
 */
estimate: number, } | { "type": "notice", 
/**
 * What kind.
 */
kind: NoticeKind, 
/**
 * The text to show.
 */
message: string, } | { "type": "done", 
/**
 * Why.
 */
finishReason: FinishReason, 
/**
 * Usage summed over iterations.
 */
usage: Usage, 
/**
 * How many tool calls the model made in the turn.
 */
toolCallsMade: number, } | { "type": "error", 
/**
 * Classification.
 */
kind: ErrorKind, 
/**
 * A specific message for a person.
 */
message: string, 
/**
 * Whether trying again may work.
 */
retryable: boolean, 
/**
 * The technical detail behind the message, for "Details".
 */
detail?: string, };

export type ElicitationMode = "form" | "url";

export type ElicitationAction = "accept" | "decline" | "cancel";

export type FieldChoice = { 
/**
 * The value sent back.
 */
value: string, 
/**
 * What the person reads; the value when the server gave no title.
 */
title: string, };

export type FieldKind = { "type": "text", 
/**
 * The text's format, when the schema names one.
 */
format?: string, 
/**
 * The fewest characters.
 */
minLength?: number, 
/**
 * The most characters.
 */
maxLength?: number, 
/**
 * The value the form starts with.
 */
default?: string, } | { "type": "number", 
/**
 * Whole numbers only.
 */
integer: boolean, 
/**
 * The smallest value.
 */
minimum?: number, 
/**
 * The largest value.
 */
maximum?: number, 
/**
 * The value the form starts with.
 */
default?: number, } | { "type": "boolean", 
/**
 * The value the form starts with.
 */
default?: boolean, } | { "type": "choice", 
/**
 * The choices, in the server's order.
 */
choices: Array<FieldChoice>, 
/**
 * Several may be chosen (the value is an array).
 */
multiple: boolean, 
/**
 * The fewest choices (multiple only).
 */
minItems?: number, 
/**
 * The most choices (multiple only).
 */
maxItems?: number, 
/**
 * The choices the form starts with (one at most when not `multiple`).
 */
default: Array<string>, };

export type FormField = { 
/**
 * The property name sent back.
 */
name: string, 
/**
 * The label; the name when the server gave no title.
 */
title: string, 
/**
 * The server's description of the field.
 */
description?: string, 
/**
 * It must be filled in to accept.
 */
required: boolean, 
/**
 * What it takes.
 */
kind: FieldKind, };

export type SamplingRole = "user" | "assistant";

export type SamplingMessage = { 
/**
 * Who wrote it.
 */
role: SamplingRole, 
/**
 * Its text (an image: `[image: image/png, 12 KB]`).
 */
text: string, };

export type ReasoningEffort = "low" | "medium" | "high";

export type GenerationOptions = { 
/**
 * The most tokens one response may produce (reasoning included where the API counts it).
 */
maxOutputTokens?: number, 
/**
 * Reasoning effort (OpenAI `reasoning_effort` / `reasoning.effort`; a budget elsewhere).
 */
reasoningEffort?: ReasoningEffort, 
/**
 * Thinking budget in tokens (Anthropic extended thinking, Gemini `thinkingBudget`); wins over
 * the effort for those APIs. 0 turns thinking off where the API allows it.
 */
thinkingBudget?: number, 
/**
 * Sampling temperature (0 to 2; Anthropic takes 0 to 1). Left out for models that refuse it
 * (OpenAI's reasoning models, Claude while it thinks).
 */
temperature?: number, 
/**
 * Nucleus sampling (0 to 1), where the API takes it.
 */
topP?: number, };

export type ConversationSummary = { 
/**
 * Conversation id.
 */
id: string, 
/**
 * Title (the first line of the first message unless renamed).
 */
title: string, 
/**
 * Unix millis.
 */
createdAt: number, 
/**
 * Unix millis of the last turn started (renaming does not count).
 */
updatedAt: number, 
/**
 * Messages of both roles.
 */
messageCount: number, 
/**
 * Kept at the top of the list.
 */
pinned: boolean, 
/**
 * Kept out of the main list (still searchable and openable).
 */
archived: boolean, };

export type Role = "user" | "assistant";

export type MessageStatus = "streaming" | "complete" | "cancelled" | "error" | "interrupted";

export type ToolCallStatus = "pending" | "running" | "ok" | "error" | "timeout" | "denied" | "skipped" | "cancelled";

export type StoredToolResult = { 
/**
 * How the call ended.
 */
status: ToolStatus, 
/**
 * What the model saw.
 */
output: string, 
/**
 * Wall time of the call.
 */
durationMs: number, 
/**
 * Images the tool returned.
 */
images?: Array<ToolImage>, };

export type StoredToolCall = { 
/**
 * The provider's call id.
 */
callId: string, 
/**
 * Registry name of the tool.
 */
name: string, 
/**
 * Where the tool comes from.
 */
source: ToolSource, 
/**
 * Raw argument text as the model sent it.
 */
arguments: string, 
/**
 * Chars (Unicode scalar values) of the turn's text before the call: where its card goes.
 */
textOffset: number, 
/**
 * 1-based loop iteration.
 */
iteration: number, 
/**
 * 0-based position in its iteration.
 */
index: number, 
/**
 * Where it is in its life.
 */
status: ToolCallStatus, 
/**
 * The result, if one was written.
 */
result: StoredToolResult | null, 
/**
 * What the sub-agents it ran did, in order (an agent's call; empty for other tools).
 */
nested?: Array<NestedEvent>, };

export type StoredError = { 
/**
 * Classification.
 */
kind: ErrorKind, 
/**
 * The message the person saw.
 */
message: string, 
/**
 * The technical detail behind it, for "Details".
 */
detail?: string, };

export type StoredNotice = { 
/**
 * What kind.
 */
kind: NoticeKind, 
/**
 * The text shown.
 */
message: string, };

export type StoredMessage = { 
/**
 * Message id.
 */
id: string, 
/**
 * Who wrote it.
 */
role: Role, 
/**
 * The visible text (the whole turn's, for an assistant message).
 */
content: string, 
/**
 * Reasoning text, shown collapsed.
 */
reasoning: string, 
/**
 * Where it is in its life.
 */
status: MessageStatus, 
/**
 * Provider profile name (assistant messages).
 */
provider: string | null, 
/**
 * Model id (assistant messages).
 */
model: string | null, 
/**
 * Why the turn ended, once it has.
 */
finishReason: FinishReason | null, 
/**
 * Tokens summed over the turn.
 */
usage: Usage, 
/**
 * How many tool calls the model made in the turn.
 */
toolCallsMade: number, 
/**
 * Why the turn failed, if it did.
 */
error: StoredError | null, 
/**
 * Notices shown during the turn, in order.
 */
notices: Array<StoredNotice>, 
/**
 * The provider's id for the response, where the provider has one.
 */
providerResponseId: string | null, 
/**
 * Unix millis.
 */
createdAt: number, 
/**
 * Unix millis of the last write.
 */
updatedAt: number, 
/**
 * The turn's tool calls, ordered by (iteration, index).
 */
toolCalls: Array<StoredToolCall>, 
/**
 * The message it follows on its branch (`None`: a first message).
 */
parentId: string | null, 
/**
 * Its versions (messages of the same role under the same parent, this one included), oldest
 * first; one entry when it has no other version.
 */
versions: Array<string>, 
/**
 * The person pinned it: it is never summarised, always sent verbatim.
 */
pinned?: boolean, 
/**
 * The files attached to it (the person's messages), in order, each under the name it was
 * attached with: references only, the bytes are read on demand.
 */
attachments?: Array<Attachment>, };

export type MessagePage = { 
/**
 * The messages, oldest first.
 */
messages: Array<StoredMessage>, 
/**
 * How many of the conversation's messages come before the first of these.
 */
earlier: number, };

export type StoredCompaction = { 
/**
 * Row id (for show and undo).
 */
id: string, 
/**
 * The answer during which it was made (the head of the path, for "compact now").
 */
messageId: string, 
/**
 * The last message of the path the summary covers: the conversation shows its boundary
 * after it. `None`: no summary (stubs only), or the path no longer holds it.
 */
throughMessageId?: string, 
/**
 * What is sent differently.
 */
compaction: Compaction, 
/**
 * Estimated tokens of the next request before and after.
 */
tokensBefore: number, 
/**
 * After.
 */
tokensAfter: number, 
/**
 * Why it was made.
 */
reason: CompactionReason, 
/**
 * The model that wrote the summary.
 */
summariser?: string, 
/**
 * What writing it used.
 */
usage?: Usage, 
/**
 * Why the model picked to write the chat's summaries did not write this one (`summariser`
 * is the chat's own model instead).
 */
summariserFallback?: string, 
/**
 * Unix millis.
 */
createdAt: number, 
/**
 * Undone: the full history is sent again.
 */
undone: boolean, };

export type SearchHitKind = "title" | "message" | "toolArguments" | "toolResult" | "attachment";

export type SearchHit = { 
/**
 * The conversation.
 */
conversationId: string, 
/**
 * Its title.
 */
title: string, 
/**
 * The message that matched, or that holds the tool call that did (none for a title).
 */
messageId?: string, 
/**
 * The tool call that matched (its `callId` within the message), for tool hits.
 */
toolCallId?: string, 
/**
 * The attached file that matched (its name), for attachment hits.
 */
attachment?: string, 
/**
 * Where the match is.
 */
kind: SearchHitKind, 
/**
 * Who wrote the message, for message hits.
 */
role?: Role, 
/**
 * A short excerpt around the match, each match between U+E000 and U+E001.
 */
snippet: string, 
/**
 * The message is on the conversation's current path (else open it by switching to it).
 */
onCurrentPath: boolean, 
/**
 * Unix millis the matched row was written (a title: the conversation's creation).
 */
createdAt: number, };

export type ChatSetup = { 
/**
 * Toolsets switched on: the chat's turns get only their tools (with its agent's). Empty:
 * every tool (or the agent's).
 */
toolsets: Array<string>, 
/**
 * The chat's own generation parameters over its profile's (`None`: the profile's).
 */
generation?: GenerationOptions, 
/**
 * The provider profile the chat last used.
 */
provider?: string, 
/**
 * The model the chat last used.
 */
model?: string, 
/**
 * The chat's budget for each of its turns (steps, time, cost; `None`: none).
 */
budget?: Budget, 
/**
 * The profile and model that write the chat's summaries when it is compacted (`None`: the
 * chat's own model).
 */
summariser?: SummariserChoice, };

export type SummariserChoice = { 
/**
 * The provider profile.
 */
provider: string, 
/**
 * The model on it.
 */
model: string, };

export type ChatGrant = { "kind": "tool", "name": string } | { "kind": "host", "name": string };

export type UsageTotals = { 
/**
 * How many requests (model calls).
 */
requests: number, 
/**
 * Input tokens (cached and cache-written ones included).
 */
promptTokens: number, 
/**
 * Output tokens (reasoning included).
 */
completionTokens: number, 
/**
 * Of the output, reasoning.
 */
reasoningTokens: number, 
/**
 * Of the input, read from the provider's cache.
 */
cachedTokens: number, 
/**
 * Of the input, written to the provider's cache.
 */
cacheWriteTokens: number, 
/**
 * US dollars, over the requests whose price is known.
 */
costUsd: number, 
/**
 * Requests whose price is unknown: their cost is not in `costUsd` ("price unknown for N
 * requests").
 */
unpricedRequests: number, 
/**
 * Requests whose usage was estimated (the provider reported none, or impossible numbers).
 */
estimatedRequests: number, };

export type RequestUsage = { 
/**
 * 1-based number of the request within its turn (the answer's, or the sub-agent run's).
 */
request: number, 
/**
 * The answer's tool call whose sub-agent run made it; `null`: the answer's own request.
 */
callId: string | null, 
/**
 * The run that made it: `""` for the answer itself, `"call_1/Scout[0]"` for a sub-agent
 * run (a deeper run appends its own call and instance).
 */
runPath: string, 
/**
 * The agent that made it (the sub-agent's, or the chat's own agent), if any.
 */
agent: string | null, 
/**
 * Ids of the tool calls this request decided (in its own run's ids).
 */
decided: Array<string>, 
/**
 * The provider profile.
 */
profile: string, 
/**
 * The profile's API kind (empty when the profile is gone).
 */
api: string, 
/**
 * The model.
 */
model: string, 
/**
 * What it used.
 */
usage: Usage, 
/**
 * What it cost; `null`: the price is unknown.
 */
costUsd: number | null, 
/**
 * The usage was estimated.
 */
estimated: boolean, 
/**
 * When it ended (ms since the Unix epoch).
 */
createdAt: number, };

export type RunUsage = { 
/**
 * The answer's tool call it ran under.
 */
callId: string, 
/**
 * The run (see [`RequestUsage::run_path`]).
 */
runPath: string, 
/**
 * The agent's name.
 */
agent: string, 
/**
 * Its requests and its children's.
 */
total: UsageTotals, };

export type ResultResend = { 
/**
 * The tool call whose result it is.
 */
callId: string, 
/**
 * The tool.
 */
name: string, 
/**
 * How many later requests sent it again.
 */
resentTimes: number, 
/**
 * About how many tokens that was in all (its size estimated, times `resentTimes`).
 */
approxTokens: number, };

export type MessageUsage = { 
/**
 * The answer.
 */
messageId: string, 
/**
 * Every request, sub-agent runs' included.
 */
total: UsageTotals, 
/**
 * In the order they ended.
 */
requests: Array<RequestUsage>, 
/**
 * Each sub-agent run, outermost first.
 */
runs: Array<RunUsage>, 
/**
 * Each tool result of the answer that later requests sent again, in call order.
 */
resends: Array<ResultResend>, };

export type MessageSpend = { 
/**
 * The answer.
 */
messageId: string, 
/**
 * Its requests, sub-agent runs' included.
 */
total: UsageTotals, };

export type ConversationUsage = { 
/**
 * Every request of the conversation.
 */
total: UsageTotals, 
/**
 * Per answer that made requests.
 */
messages: Array<MessageSpend>, };

export type UsageGrouping = "day" | "model" | "profile" | "agent" | "conversation";

export type UsageQuery = { 
/**
 * The grouping.
 */
by: UsageGrouping, 
/**
 * A second grouping inside each group (e.g. by day, then by model, for a stacked chart).
 */
split?: UsageGrouping, 
/**
 * From this time on (ms since the Unix epoch, inclusive).
 */
since?: number, 
/**
 * Before this time (ms since the Unix epoch, exclusive).
 */
until?: number, 
/**
 * The caller's offset from UTC in minutes (east positive), so days are the person's days.
 */
utcOffsetMinutes?: number, };

export type UsageGroup = { 
/**
 * What identifies it (a day, a model, a profile, an agent, a conversation id).
 */
key: string, 
/**
 * What to show for it (a conversation's title; otherwise the key).
 */
label: string, 
/**
 * The key of the split inside the group, when the query has one.
 */
sub: string | null, 
/**
 * Its requests.
 */
total: UsageTotals, };

export type UsageReport = { 
/**
 * The query's grouping.
 */
by: UsageGrouping, 
/**
 * The query's split.
 */
split: UsageGrouping | null, 
/**
 * Days in order; other groups the costliest first.
 */
groups: Array<UsageGroup>, 
/**
 * Everything in the period.
 */
total: UsageTotals, };

export type ChatSetupChange = { 
/**
 * The toolsets switched on from now on (empty: every tool, or the agent's).
 */
toolsets?: Array<string>, 
/**
 * The chat's parameters from now on (none set: the profile's).
 */
generation?: GenerationOptions, 
/**
 * The profile from now on, with `model` (left out: the profile's model).
 */
provider?: string, 
/**
 * The model from now on.
 */
model?: string, 
/**
 * The chat's budget from now on (every limit empty: none).
 */
budget?: Budget, 
/**
 * Who writes the chat's summaries from now on.
 */
summariser?: SummariserChange, };

export type SummariserChange = { "kind": "chat" } | { "kind": "pick", 
/**
 * The provider profile.
 */
provider: string, 
/**
 * The model on it.
 */
model: string, };

export type ConversationView = { 
/**
 * Its summary.
 */
conversation: ConversationSummary, 
/**
 * Its last messages (at most `OPEN_PAGE`), oldest first, with tool calls and results.
 */
messages: Array<StoredMessage>, 
/**
 * How many messages come before these (read with `older_messages`).
 */
earlier: number, 
/**
 * Tools disabled for this conversation.
 */
disabledTools: Array<string>, 
/**
 * The agent it runs, if any.
 */
agent?: string, 
/**
 * Its setup: toolsets switched on, its parameters, the profile and model it last used
 * (always there from the service; optional for views made without a store).
 */
setup?: ChatSetup, };

export type SendRequest = { 
/**
 * The conversation to continue, or `null` for a new one.
 */
conversationId: string | null, 
/**
 * What the person typed.
 */
text: string, 
/**
 * Provider profile (default: the default profile).
 */
provider: string | null, 
/**
 * Model (default: the profile's model).
 */
model: string | null, 
/**
 * Tools forced for the first iteration.
 */
forced: Array<string>, 
/**
 * `false`: no tools this turn.
 */
useTools: boolean, 
/**
 * Tools return their example output instead of running.
 */
dryRun: boolean, 
/**
 * Tools to disable for this chat from this turn on (remembered with the chat). A new chat
 * has no id to disable tools on before its first turn; this is how it gets them.
 */
disableForChat: Array<string>, 
/**
 * System prompt for this turn.
 */
systemPrompt?: string, 
/**
 * Overrides the settings' most model calls with tools for this turn.
 */
maxIterations?: number, 
/**
 * This chat's generation settings; each one set wins over the profile's. Kept with the
 * chat; left out in an existing chat: the chat's.
 */
generation?: GenerationOptions, 
/**
 * The agent a new chat runs (a chat keeps the one it started with).
 */
agent?: string, 
/**
 * Toolsets switched on from this turn: its tools are theirs (with the agent's, if any);
 * kept with the chat. Left out in an existing chat: the chat's (its setup).
 */
toolsets?: Array<string>, 
/**
 * This turn's budget (steps, time, cost), over the chat's limit by limit.
 */
budget?: Budget, 
/**
 * The files attached to the message, in order: ids of attachments the service stored
 * (`attach_file`, an upload). Only ids: what they are comes from the store, never from the
 * page. An id the store does not have (any more) refuses the message, storing nothing.
 */
attachments?: Array<string>, };

export type EditRequest = { 
/**
 * The conversation.
 */
conversationId: string, 
/**
 * The person's message to edit.
 */
messageId: string, 
/**
 * The new text.
 */
text: string, 
/**
 * The files the new version carries (ids, in order); left out: the ones the edited message
 * has. An empty list removes them.
 */
attachments?: Array<string>, 
/**
 * The choices to ask with; left out: the ones the message was asked with.
 */
choices?: TurnChoices, };

export type TurnChoices = { 
/**
 * Provider profile (default: the default profile).
 */
provider: string | null, 
/**
 * Model (default: the profile's model).
 */
model: string | null, 
/**
 * Tools forced for the first iteration.
 */
forced: Array<string>, 
/**
 * `false`: no tools this turn.
 */
useTools: boolean, 
/**
 * Tools return their example output instead of running.
 */
dryRun: boolean, 
/**
 * System prompt.
 */
systemPrompt: string | null, 
/**
 * Most model calls with tools before a final answer (default: the settings').
 */
maxIterations: number | null, 
/**
 * This chat's generation settings over the profile's.
 */
generation?: GenerationOptions, 
/**
 * What the model was given as its system prompt (the custom instructions, the chat's own
 * and this turn's), kept with the question for the record. Composed again when asked again.
 */
sentInstructions?: string, 
/**
 * The agent the chat runs.
 */
agent?: string, 
/**
 * Toolsets switched on for the turn.
 */
toolsets?: Array<string>, 
/**
 * This turn's budget, over the chat's limit by limit.
 */
budget?: Budget, };

export type ChatInstructions = { 
/**
 * The custom instructions every chat gets (Settings → Chats).
 */
custom: string, 
/**
 * This chat's own (empty: none).
 */
chat: string, 
/**
 * What its last question was sent with, if it was recorded.
 */
lastSent: string | null, };

export type ConversationContext = { 
/**
 * Tokens the next request sends before the person's new message.
 */
usedTokens: number, 
/**
 * The model's window (`None`: unknown).
 */
window: number | null, 
/**
 * Where the tokens go.
 */
breakdown: ContextBreakdown, 
/**
 * No provider report is part of `used_tokens`.
 */
estimated: boolean, 
/**
 * The fraction of the window past which the loop compacts.
 */
compactAt: number, };

export type TurnStarted = { 
/**
 * Conversation id (new or existing).
 */
conversationId: string, 
/**
 * The assistant message being produced.
 */
messageId: string, 
/**
 * The person's message.
 */
userMessageId: string, };

export type ToolInfo = { 
/**
 * Registry name.
 */
name: string, 
/**
 * What it does.
 */
description: string, 
/**
 * Where it comes from.
 */
source: ToolSource, 
/**
 * Enabled in Settings (the person as administrator of their own app).
 */
enabled: boolean, 
/**
 * Disabled for the conversation asked about.
 */
disabledForChat: boolean, 
/**
 * Effective approval policy.
 */
approval: ApprovalPolicy, 
/**
 * Offered only when forced, and then alone.
 */
exclusive: boolean, 
/**
 * Takes over the answer when it runs.
 */
takesControl: boolean, 
/**
 * JSON Schema of the arguments.
 */
parameters: unknown, 
/**
 * What the tool-definition lint found in its description and schema: shown as a warning,
 * never blocking by itself.
 */
findings: Array<Finding>, };

export type ProviderInfo = { 
/**
 * Profile name.
 */
name: string, 
/**
 * API kind.
 */
kind: string, 
/**
 * Base URL.
 */
baseUrl: string, 
/**
 * Default model.
 */
model: string | null, 
/**
 * Whether it is the default profile.
 */
isDefault: boolean, 
/**
 * Generation settings and capability overrides.
 */
options: ProfileOptions, };

export type ApprovalChoice = "once" | "chat" | "always" | "deny";

export type IpcError = { 
/**
 * Classification.
 */
kind: ErrorKind, 
/**
 * What to tell the person. Never contains a secret.
 */
message: string, 
/**
 * Whether trying again may work.
 */
retryable: boolean, };

export type KeyMode = "keychain" | "environment" | "memory";

export type KeychainStatus = { 
/**
 * Where keys go now.
 */
mode: KeyMode, 
/**
 * Why the keychain cannot be used (names the cause and the choices), if it cannot.
 */
problem: string | null, };

export type KeyPurpose = "provider" | "tool";

export type KeyInfo = { 
/**
 * Key name (profile name, `tavily`, `exa`).
 */
name: string, 
/**
 * What to call it on screen.
 */
label: string, 
/**
 * Provider or tool.
 */
purpose: KeyPurpose, 
/**
 * Whether a value is set anywhere.
 */
isSet: boolean, 
/**
 * Last four characters (only for keys of 8 or more).
 */
last4: string | null, 
/**
 * Which store holds it.
 */
source: string, 
/**
 * The environment variable that also provides it.
 */
envVar: string, };

export type DataInfo = { 
/**
 * The data directory.
 */
dataDir: string | null, 
/**
 * The SQLite database file.
 */
database: string | null, };

export type AttachmentPreview = { 
/**
 * The attachment.
 */
attachment: Attachment, 
/**
 * A text file's text, or a PDF's extracted text (at most 1 MiB); `null` for an image or a
 * PDF without a text layer.
 */
text: string | null, 
/**
 * Whether `text` was cut at 1 MiB.
 */
truncated: boolean, 
/**
 * An image as a `data:` URL, at most 2048 pixels a side.
 */
image: string | null, };

export type PickedAttachments = { 
/**
 * The attached files.
 */
attached: Array<Attachment>, 
/**
 * The files refused, each with why.
 */
refused: Array<AttachRefusal>, };

export type AttachRefusal = { 
/**
 * The file's name (never its path).
 */
name: string, 
/**
 * Why, in the service's words.
 */
message: string, };

export type ProfileOptions = { 
/**
 * Output limit and reasoning controls sent with every request.
 */
generation: GenerationOptions, 
/**
 * Whether the model takes tools; `None` leaves it to the capability table.
 */
tools?: boolean, 
/**
 * Responses API only: whether the provider keeps responses (`store`), which continuing
 * from the previous response needs; `None` is the API's default (kept).
 */
store?: boolean, 
/**
 * The model's context window in tokens, where the catalogue is wrong or silent.
 */
contextWindow?: number, 
/**
 * The model's output limit in tokens, where the catalogue is wrong or silent.
 */
maxOutputTokens?: number, 
/**
 * The model's prices, where the catalogue is wrong or silent (a negotiated rate).
 */
prices?: Prices, };

export type ProviderProfile = { 
/**
 * Unique name the person chose ("openai", "work-anthropic").
 */
name: string, 
/**
 * Which API the providers crate should speak (its own naming).
 */
kind: string, 
/**
 * Endpoint base URL.
 */
baseUrl: string, 
/**
 * Default model for new turns.
 */
model: string | null, 
/**
 * Generation settings and capability overrides.
 */
options?: ProfileOptions, };

export type ConnectionReport = { 
/**
 * Everything needed for a turn works.
 */
ok: boolean, 
/**
 * One line for a person: what works, or what is wrong and what to do.
 */
summary: string, 
/**
 * Whether the key was accepted; `None` when the server was not reached.
 */
keyAccepted: boolean | null, 
/**
 * How many models the API listed; `None` when it lists none or the listing failed.
 */
models: number | null, 
/**
 * Whether the profile's model is in the listing; `None` when unknown.
 */
modelListed: boolean | null, 
/**
 * Whether the model took a tool definition in a tiny request; `None` when not tried.
 */
tools: boolean | null, 
/**
 * The failure's classification, when something failed.
 */
errorKind: ErrorKind | null, 
/**
 * The failure's full message, for "Details".
 */
detail: string | null, };

export type ExportFormat = "markdown" | "json";

export type ImportFormat = "switchboard" | "chatgpt";

export type ConversationImportPreview = { 
/**
 * What the file is.
 */
format: ImportFormat, 
/**
 * Conversations in the file.
 */
conversations: number, 
/**
 * Of those, already in this app (they would be skipped).
 */
alreadyImported: number, 
/**
 * Messages in the conversations that would be imported (every version counted).
 */
messages: number, 
/**
 * Titles of the first conversations that would be imported (at most 20).
 */
titles: Array<string>, 
/**
 * The conversations that cannot be imported, with why (the others still can).
 */
refused: Array<RefusedConversation>, 
/**
 * One line for the person, e.g. "3 conversations, 1 already imported".
 */
summary: string, };

export type ConversationImportFile = { 
/**
 * The picked file.
 */
file: PickedFile, 
/**
 * What importing it would do.
 */
preview: ConversationImportPreview, };

export type ConversationImportReport = { 
/**
 * What the file was.
 */
format: ImportFormat, 
/**
 * Ids of the conversations imported.
 */
imported: Array<string>, 
/**
 * How many were skipped because they were already imported.
 */
skipped: number, 
/**
 * Messages written.
 */
messages: number, 
/**
 * The conversations left out because they cannot be imported, each with why.
 */
refused: Array<RefusedConversation>, 
/**
 * One line for the person.
 */
summary: string, };

export type RefusedConversation = { 
/**
 * Its id, when the file gives one.
 */
id: string | null, 
/**
 * Its title, or where it is in the file ("conversation #3") when it has none.
 */
title: string, 
/**
 * Why, for the person.
 */
reason: string, };

export type DetectedServer = { 
/**
 * The preset it matches (`ollama`, `lmstudio`).
 */
preset: string, 
/**
 * What to call it.
 */
label: string, 
/**
 * Where it answered.
 */
baseUrl: string, 
/**
 * The models it lists.
 */
models: Array<string>, 
/**
 * The name of a profile that already points there, if any.
 */
profile: string | null, };

export type ModelCapabilities = { 
/**
 * Takes tool definitions and calls tools.
 */
tools: boolean | null, 
/**
 * Takes images in messages.
 */
images: boolean | null, 
/**
 * Takes PDF documents as such (a document block, a file part); a model that does not gets
 * the PDF's extracted text instead.
 */
pdf: boolean | null, 
/**
 * Takes reasoning controls (effort, thinking budget).
 */
reasoning: boolean | null, 
/**
 * Takes sampling settings (temperature, top-p); OpenAI's reasoning models refuse them.
 */
sampling: boolean | null, };

export type ModelSpec = { 
/**
 * Input tokens one request may hold.
 */
contextWindow?: number, 
/**
 * Output tokens one response may hold.
 */
maxOutput?: number, 
/**
 * What its tokens cost; `None`: unknown (never shown as free).
 */
prices?: Prices, 
/**
 * Whether it takes tools.
 */
tools?: boolean, 
/**
 * Whether it takes images.
 */
images?: boolean, 
/**
 * Whether it takes PDF documents.
 */
pdf?: boolean, 
/**
 * Whether it reasons (takes reasoning controls).
 */
reasoning?: boolean, };

export type SpecSource = "profile" | "listing" | "catalogue" | "default";

export type ResolvedModel = { 
/**
 * Window, output limit, prices (`None`: unknown), capabilities. The window is always set.
 */
spec: ModelSpec, 
/**
 * Where the window came from.
 */
source: SpecSource, 
/**
 * Where the output limit came from; `None`: unknown.
 */
maxOutputSource: SpecSource | null, 
/**
 * Where the prices came from; `None`: unknown (and for a free local server).
 */
pricesSource: SpecSource | null, 
/**
 * Served from this computer or a private network, and not priced by the person: free.
 */
free: boolean, };

export type ModelDetails = { 
/**
 * The profile it was resolved for.
 */
provider: string, 
/**
 * The model.
 */
model: string, 
/**
 * Window, output limit, prices and where each came from.
 */
resolved: ResolvedModel, 
/**
 * What it can do: the profile's override, else the listing, else the catalogue (images and
 * PDFs), else the capability table.
 */
capabilities: ModelCapabilities, 
/**
 * "The context window of … is unknown; … assumed", when it is.
 */
note: string | null, };

export type CatalogueSource = "bundled" | "refreshed";

export type CatalogueInfo = { 
/**
 * Bundled or refreshed.
 */
source: CatalogueSource, 
/**
 * The snapshot's date (`YYYY-MM-DD`): LiteLLM's for the bundled one, the day of the refresh
 * for a refreshed one.
 */
date: string, 
/**
 * How many models it knows.
 */
models: number, 
/**
 * Why a refreshed catalogue is not the one in use, when one was saved but could not be read.
 */
problem: string | null, };

export type Preset = { 
/**
 * Stable id, also the suggested profile name.
 */
id: string, 
/**
 * What the picker shows.
 */
label: string, 
/**
 * The API kind (an id of `KINDS`).
 */
kind: string, 
/**
 * The base URL.
 */
baseUrl: string, 
/**
 * Whether it needs a key.
 */
needsKey: boolean, 
/**
 * A model to start with, when one is a safe default.
 */
model: string | null, 
/**
 * A local server: looked for on its default port.
 */
local: boolean, };

export type TitleMode = "model" | "firstLine";

export type ChatPrefs = { 
/**
 * How a new chat gets its title.
 */
titles: TitleMode, 
/**
 * Custom instructions: given to the model in every chat, before a chat's own.
 */
instructions: string, 
/**
 * The budget a new chat starts with (steps, time, cost per turn; empty: none).
 */
budget?: Budget, };

export type ToolPrefs = { 
/**
 * Tools never offered.
 */
disabled: Array<string>, 
/**
 * Approval policy overrides.
 */
approval: { [key in string]: ApprovalPolicy }, 
/**
 * Tools that may send data to a destination not used in the chat after it read untrusted
 * content, without asking (the person's choice, confirmed like every widening).
 */
egressExempt: Array<string>, };

export type Limits = { 
/**
 * Model calls with tools per turn before the last, tools-off call.
 */
maxIterations: number | null, 
/**
 * Unique tool calls run per round.
 */
maxToolCallsPerRound: number | null, 
/**
 * Per-call tool timeout, seconds.
 */
toolTimeoutSecs: number | null, 
/**
 * A stream silent this long is abandoned, seconds.
 */
idleTimeoutSecs: number | null, 
/**
 * The longest tool result the model receives whole, characters; a longer one is cut and
 * the model reads the rest with `read_tool_result`.
 */
toolResultChars: number | null, 
/**
 * Compact before a request that would fill more than this percent of the model's window.
 */
compactAtPercent: number | null, };

export type Retry = { 
/**
 * How many retries.
 */
maxRetries: number | null, 
/**
 * First delay, milliseconds; doubles per attempt.
 */
baseDelayMs: number | null, };

export type SearchBackend = "tavily" | "exa" | "searxng";

export type WebPrefs = { 
/**
 * The search API.
 */
searchBackend: SearchBackend, 
/**
 * Base URL of the SearXNG instance.
 */
searxngUrl: string | null, 
/**
 * Let `web_fetch` reach loopback and private-network addresses (a local wiki, a NAS).
 */
allowLocalAddresses: boolean, };

export type Settings = { 
/**
 * Default provider profile.
 */
defaultProvider: string | null, 
/**
 * Tool preferences.
 */
tools: ToolPrefs, 
/**
 * Loop limits.
 */
limits: Limits, 
/**
 * Retry policy.
 */
retry: Retry, 
/**
 * Search & web tools.
 */
web: WebPrefs, 
/**
 * Chat preferences.
 */
chats: ChatPrefs, };

export type Capabilities = { 
/**
 * Lists its models over the API.
 */
listsModels: boolean, };

export type ProviderKindInfo = { 
/**
 * The name stored in profiles.
 */
id: string, 
/**
 * What the picker shows.
 */
label: string, 
/**
 * The base URL a new profile of this kind starts with.
 */
defaultBaseUrl: string, 
/**
 * The environment variable its key is usually in.
 */
keyEnv: string, 
/**
 * What the API can do.
 */
capabilities: Capabilities, };

export type SourceStatus = { "state": "starting" } | { "state": "ready" } | { "state": "failed", 
/**
 * What went wrong, for the person.
 */
reason: string, } | { "state": "stopped" } | { "state": "needsApproval", 
/**
 * What the person is asked to approve, in words.
 */
reason: string, } | { "state": "needsSignIn", 
/**
 * Why, in words.
 */
reason: string, };

export type ServerConfig = { 
/**
 * `stdio`, `http` (streamable HTTP) or `sse` (taken as streamable HTTP); inferred when absent.
 */
type?: string | null, 
/**
 * The program to run (stdio).
 */
command?: string | null, 
/**
 * Its arguments, passed as they are (no shell).
 */
args?: Array<string>, 
/**
 * Environment variables added to the app's own; values may be `${secret:NAME}`.
 */
env?: { [key in string]: string }, 
/**
 * The working directory (default: the config directory).
 */
cwd?: string | null, 
/**
 * The server's URL (streamable HTTP).
 */
url?: string | null, 
/**
 * Headers sent with every request; values may be `${secret:NAME}`.
 */
headers?: { [key in string]: string }, 
/**
 * Kept in the file but not started.
 */
disabled?: boolean, 
/**
 * Seconds a tool call may take before it is cancelled (default: the app's tool timeout).
 */
timeout?: number | null, 
/**
 * Folders this server is told of (`roots/list`), after the ones for every server.
 */
roots?: Array<string>, 
/**
 * The profile (and model) that answers this server's requests for a completion; none: the
 * calling chat's.
 */
sampling?: SamplingModel | null, };

export type SamplingModel = { 
/**
 * The provider profile's name.
 */
profile: string, 
/**
 * The model; none: the profile's default.
 */
model?: string | null, };

export type OfferedTool = { 
/**
 * The registry name.
 */
name: string, 
/**
 * The server's own name for it.
 */
remote: string, 
/**
 * The server's hints (`readOnlyHint`, `destructiveHint`, ...); shown, never trusted.
 */
annotations: Record<string, unknown> | null, 
/**
 * What the tool-definition lint found in its description and schema (shown, not blocking).
 */
findings: Array<Finding>, };

export type HeldTool = { 
/**
 * The registry name (`server__tool`).
 */
name: string, 
/**
 * Why it is held, in words.
 */
why: string, 
/**
 * Its description now, for the person to read before approving.
 */
description: string, 
/**
 * The fingerprint of the definition shown; approving it approves exactly that definition.
 */
fingerprint: string, 
/**
 * What the tool-definition lint found in it, shown before it is approved.
 */
findings: Array<Finding>, };

export type ServerDetail = { 
/**
 * The server's name.
 */
name: string, 
/**
 * `stdio` or `http`.
 */
transport: string, 
/**
 * The command line (stdio) or the URL (http), secrets as references.
 */
target: string, 
/**
 * Where it is in its life.
 */
status: SourceStatus, 
/**
 * Tools offered, by registry name, with the server's annotations when it gave any.
 */
tools: Array<OfferedTool>, 
/**
 * Tools the server listed that could not be offered, with the reason.
 */
skipped: Array<string>, 
/**
 * Tools held back until approved again.
 */
held: Array<HeldTool>, 
/**
 * The last lines of its stderr.
 */
stderr: Array<string>, 
/**
 * The server's name and version as it introduced itself.
 */
serverInfo: string | null, 
/**
 * Restarts after failures since it was last started by hand.
 */
restarts: number, 
/**
 * What it declared it offers beyond tools (prompts, resources, ...), while it runs.
 */
offers: Offers, 
/**
 * The log level chosen for its log notifications, if one was.
 */
logLevel: LogLevel | null, };

export type McpServerInfo = { 
/**
 * Its entry in the config file.
 */
config: ServerConfig, 
/**
 * Whether it is enabled (not `disabled` in the file).
 */
enabled: boolean, 
/**
 * Its state: status, tools, held-back tools, stderr.
 */
detail: ServerDetail, };

export type McpEdited = { 
/**
 * The server after the edit (started, or waiting for approval of what it now runs).
 */
server: McpServerInfo, 
/**
 * Calls the old server was running; each was stopped with a notice on its card.
 */
stoppedCalls: number, };

export type McpOverview = { 
/**
 * The config file's path.
 */
configPath: string | null, 
/**
 * Why the file could not be used, in words; the servers are then the last good ones.
 */
problem: string | null, 
/**
 * The servers in name order.
 */
servers: Array<McpServerInfo>, };

export type ImportedServer = { 
/**
 * Its name here.
 */
name: string, 
/**
 * The command line or URL.
 */
target: string, 
/**
 * Values that go to the keychain instead of the file (`env GITHUB_TOKEN`).
 */
secrets: Array<string>, 
/**
 * A server of that name exists already; it is left as it is.
 */
exists: boolean, };

export type ImportPreview = { 
/**
 * The file.
 */
path: string, 
/**
 * The servers in it.
 */
servers: Array<ImportedServer>, 
/**
 * Fields and entries left behind, and renames.
 */
notes: Array<string>, };

export type ImportSource = { 
/**
 * `claude` or `cursor`.
 */
app: string, 
/**
 * The file.
 */
path: string, };

export type Offers = { 
/**
 * Prompts (`prompts/list`, `prompts/get`).
 */
prompts: boolean, 
/**
 * Resources and templates.
 */
resources: boolean, 
/**
 * Resource subscriptions.
 */
subscribe: boolean, 
/**
 * Argument completion.
 */
completions: boolean, 
/**
 * Log notifications at a chosen level.
 */
logging: boolean, };

export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

export type PromptArgument = { 
/**
 * Its name (the key of `arguments` in `prompts/get`).
 */
name: string, 
/**
 * Its title for people.
 */
title: string | null, 
/**
 * What to give.
 */
description: string | null, 
/**
 * Whether the prompt needs it.
 */
required: boolean, };

export type PromptInfo = { 
/**
 * The server's name for it (what `prompts/get` sends).
 */
name: string, 
/**
 * Its title for people, when it gave one.
 */
title: string | null, 
/**
 * What it is for.
 */
description: string | null, 
/**
 * Its arguments, in the server's order.
 */
arguments: Array<PromptArgument>, };

export type McpPrompts = { 
/**
 * The server.
 */
server: string, 
/**
 * Its prompts, in its order.
 */
prompts: Array<PromptInfo>, 
/**
 * What was left out of its listing, one reason each.
 */
skipped: Array<string>, };

export type PromptRole = "user" | "assistant";

export type PromptMessageText = { 
/**
 * Who says it.
 */
role: PromptRole, 
/**
 * What it says (non-text content described in words).
 */
text: string, };

export type PromptMessages = { 
/**
 * The server.
 */
server: string, 
/**
 * The prompt.
 */
prompt: string, 
/**
 * The server's description of this prompt, if it gave one.
 */
description: string | null, 
/**
 * Every message's text joined, in order, for the message box (an assistant's message
 * is marked as such).
 */
text: string, 
/**
 * The messages one by one.
 */
messages: Array<PromptMessageText>, 
/**
 * Images and embedded resources, stored as attachments, in order.
 */
attachments: Array<Attachment>, 
/**
 * What could not be carried, in words (audio, an unreadable embedded resource).
 */
notes: Array<string>, };

export type McpResource = { 
/**
 * Whether Switchboard follows its updates.
 */
subscribed: boolean, 
/**
 * Updates the server announced since it was last read (more than 0: "updated").
 */
updates: number, 
/**
 * Its URI (what `resources/read` sends).
 */
uri: string, 
/**
 * Its name.
 */
name: string, 
/**
 * Its title for people.
 */
title: string | null, 
/**
 * What it is.
 */
description: string | null, 
/**
 * Its media type, when the server said.
 */
mimeType: string | null, 
/**
 * Its size in bytes, when the server said (not checked: the read is).
 */
size: number | null, };

export type ResourceTemplateInfo = { 
/**
 * The template, `demo://resource/{id}`.
 */
uriTemplate: string, 
/**
 * Its name.
 */
name: string, 
/**
 * Its title for people.
 */
title: string | null, 
/**
 * What it gives.
 */
description: string | null, 
/**
 * The media type of what it gives, when the server said.
 */
mimeType: string | null, 
/**
 * Its variables in order (empty when the template uses expressions this app does not
 * expand; then `problem` says so).
 */
variables: Array<string>, 
/**
 * Why it cannot be used, when it cannot.
 */
problem: string | null, };

export type McpResources = { 
/**
 * The server.
 */
server: string, 
/**
 * Its resources, in its order.
 */
resources: Array<McpResource>, 
/**
 * Its templates, in its order.
 */
templates: Array<ResourceTemplateInfo>, 
/**
 * What was left out of its listings, one reason each.
 */
skipped: Array<string>, };

export type McpResourceUpdate = { 
/**
 * The server.
 */
server: string, 
/**
 * The resource.
 */
uri: string, 
/**
 * Updates announced since it was last read.
 */
updates: number, };

export type McpResourceText = { 
/**
 * The server.
 */
server: string, 
/**
 * The resource.
 */
uri: string, 
/**
 * Its media type, when the server said.
 */
mimeType: string | null, 
/**
 * Its text (every content, in order).
 */
text: string, };

export type CompletionRef = { "type": "prompt", name: string, } | { "type": "resource", uri: string, };

export type Completion = { 
/**
 * The values, at most [`MAX_COMPLETIONS`].
 */
values: Array<string>, 
/**
 * How many there are in all, when the server said.
 */
total: number | null, 
/**
 * Whether there are more than shown.
 */
hasMore: boolean, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type HttpToolConfig = { 
/**
 * The tool's name as the model sees it (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
 */
name: string, 
/**
 * What it does, for the model.
 */
description: string, 
/**
 * `GET` (the default), `POST`, `PUT`, `PATCH`, `DELETE` or `HEAD`; any case is accepted
 * when read, and kept in upper case.
 */
method: string, 
/**
 * The URL template: absolute `http(s)`, placeholders only in the path and the query string.
 */
url: string, 
/**
 * Extra query parameters; values are templates (`{{secret:NAME}}` allowed), names literal.
 */
query?: { [key in string]: string }, 
/**
 * Request headers; values are templates (`{{secret:NAME}}` allowed), names literal.
 */
headers?: { [key in string]: string }, 
/**
 * A JSON template of the request body (POST, PUT, PATCH, DELETE): a string that is exactly
 * one `{{param}}` becomes the argument's JSON value, type and all; other strings are
 * rendered as text; object keys are literal.
 */
body?: JsonValue | null, 
/**
 * JSON Schema of the arguments; every placeholder a required string when absent.
 */
parameters?: JsonValue | null, 
/**
 * Time limit of one call, redirects included (default 30, at most 300).
 */
timeoutSecs?: number | null, 
/**
 * The most bytes of response read (default 1 MiB, at most 32 MiB); a larger response fails.
 */
maxResponseBytes?: number | null, 
/**
 * A JSON pointer (`/data/items`) to the part of a JSON response the model gets.
 */
responsePointer?: string | null, 
/**
 * The most characters of output (default 20 000); the rest is cut with a note.
 */
maxChars?: number | null, 
/**
 * Whether a call asks first; by default GET and HEAD run, every other method asks (it may
 * change something).
 */
approval?: ApprovalPolicy | null, 
/**
 * Lets the tool reach loopback, private and link-local addresses (a service on this
 * computer or the local network). Off by default, as for `web_fetch`.
 */
allowLocalAddresses?: boolean, 
/**
 * What a dry run returns instead of calling the API.
 */
exampleOutput?: string | null, };

export type CommandToolConfig = { 
/**
 * The tool's name (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
 */
name: string, 
/**
 * What it does, for the model.
 */
description: string, 
/**
 * The program and its arguments, each a template; the program itself has no placeholder.
 */
argv: Array<string>, 
/**
 * The working folder, an absolute path; the person's home folder when unset.
 */
cwd?: string | null, 
/**
 * Extra environment variables; values are templates and may hold secrets.
 */
env?: { [key in string]: string }, 
/**
 * JSON Schema of the arguments; when unset every placeholder is a required string.
 */
parameters?: JsonValue | null, 
/**
 * The time limit in seconds (default 60, at most 3600).
 */
timeoutSecs?: number | null, 
/**
 * How much of stdout and of stderr is kept, in bytes (default 64 KiB, at most 4 MiB).
 */
maxOutputBytes?: number | null, 
/**
 * Whether a call asks first (default: ask).
 */
approval?: ApprovalPolicy | null, 
/**
 * What a dry run returns instead of running the command.
 */
exampleOutput?: string | null, };

export type DefinedKind = "http" | "command" | "openApi";

export type DefinedState = { "state": "ready" } | { "state": "needsApproval", 
/**
 * What the person is asked, in words.
 */
reason: string, } | { "state": "invalid", 
/**
 * What is wrong, in words.
 */
reason: string, };

export type DefinedToolInfo = { 
/**
 * Its name (as the model sees it).
 */
name: string, 
/**
 * HTTP or command.
 */
kind: DefinedKind, 
/**
 * What it does, for the model.
 */
description: string, 
/**
 * What it reaches: the method and URL template, or the command line template.
 */
target: string, 
/**
 * The keys it uses (by name).
 */
keys: Array<string>, 
/**
 * Whether each call asks the person first.
 */
asksFirst: boolean, 
/**
 * Where it stands.
 */
state: DefinedState, };

export type DefinedToolsOverview = { 
/**
 * The file's path.
 */
configPath: string | null, 
/**
 * Why the file could not be used, in words; the tools are then the last good ones.
 */
problem: string | null, 
/**
 * The tools in file order, HTTP tools first.
 */
tools: Array<DefinedToolInfo>, };

export type DefinedConfig = { "kind": "http", "config": HttpToolConfig } | { "kind": "command", "config": CommandToolConfig };

export type TryResult = { 
/**
 * The request as it was sent (keys as `[secret NAME]`), or why it could not be built.
 */
request: string, 
/**
 * What the tool returned, when it worked.
 */
ok: string | null, 
/**
 * What went wrong, in words, when it did not.
 */
error: string | null, };

export type OpenApiRequest = { 
/**
 * The person's name for the API (letters, digits, '-', '_').
 */
name: string, 
/**
 * A file path or an http(s) URL.
 */
source: string, 
/**
 * The base URL to call instead of the document's.
 */
server: string | null, 
/**
 * Security scheme -> key store entry.
 */
keys: { [key in string]: string }, 
/**
 * Only these operations (tool names); `None`: the default selection.
 */
include: Array<string> | null, 
/**
 * Let its tools (and the download) reach this computer and the local network.
 */
allowLocalAddresses: boolean, };

export type OpenApiPreview = { 
/**
 * `info.title`.
 */
title: string, 
/**
 * Its servers (the first absolute one is the default).
 */
servers: Array<string>, 
/**
 * Its security schemes and the key each would use.
 */
schemes: Array<OpenApiScheme>, 
/**
 * Every operation, selected as an import without a choice would select it.
 */
operations: Array<OpenApiOperation>, 
/**
 * What is not supported and would be left out.
 */
notes: Array<string>, };

export type OpenApiScheme = { 
/**
 * Its name in the document.
 */
name: string, 
/**
 * What it is, in words ("API key in the header 'api_key'").
 */
kind: string, 
/**
 * Whether its tools can send it.
 */
supported: boolean, 
/**
 * The key store entry it would use.
 */
key: string | null, };

export type OpenApiOperation = { 
/**
 * The tool's name.
 */
tool: string, 
/**
 * `GET /pets/{petId}`.
 */
route: string, 
/**
 * Its summary.
 */
summary: string, 
/**
 * Whether it is offered.
 */
selected: boolean, 
/**
 * Why it is left out although chosen: a tool of another source (a built-in, a server, a
 * document) holds its name, or the name is reserved. Such an operation is never `selected`.
 */
leftOut: string | null, };

export type OpenApiImport = { 
/**
 * The document as Settings lists it.
 */
document: DefinedToolInfo, 
/**
 * Every operation: its tool name, method and path, and whether it is offered.
 */
operations: Array<OpenApiOperation>, 
/**
 * Its servers (the first absolute one is the default).
 */
servers: Array<string>, 
/**
 * What was not supported and left out.
 */
notes: Array<string>, };

export type OpenApiSource = { "kind": "url", url: string, } | { "kind": "chooseFile" } | { "kind": "picked", pick: string, };

export type OpenApiWindowRequest = { 
/**
 * The person's name for the API (letters, digits, '-', '_').
 */
name: string, 
/**
 * Where the document comes from.
 */
source: OpenApiSource, 
/**
 * The base URL to call instead of the document's.
 */
server: string | null, 
/**
 * Security scheme -> key store entry.
 */
keys: { [key in string]: string }, 
/**
 * Only these operations (tool names); `None`: the default selection.
 */
include: Array<string> | null, 
/**
 * Let its tools (and the download) reach this computer and the local network.
 */
allowLocalAddresses: boolean, };

export type OpenApiWindowPreview = { 
/**
 * What the document holds.
 */
preview: OpenApiPreview, 
/**
 * The picked file it was read from (`None` for a URL).
 */
file: PickedFile | null, };

export type PickedFile = { 
/**
 * What the window sends back ([`OpenApiSource::Picked`]) to mean this file.
 */
pick: string, 
/**
 * The file's name, for the person.
 */
name: string, };

export type NestedEvent = { 
/**
 * The instance, `Name[i]`.
 */
instance: string, 
/**
 * The child's event (its own sub-agents' events nested inside, the same way).
 */
event: ChatEvent, };

export type AgentsFile = { 
/**
 * Named groups of tools.
 */
toolsets?: Array<Toolset>, 
/**
 * Agents.
 */
agents?: Array<AgentConfig>, };

export type Toolset = { 
/**
 * Its name (letters, digits, '-', '_').
 */
name: string, 
/**
 * What it is for, for the person.
 */
description?: string, 
/**
 * Tool names, `mcp:<server>`, `openapi:<document>`, `builtin`, `agent:<Name>`.
 */
tools: Array<string>, };

export type AgentConfig = { 
/**
 * Its name; as a tool, `agent__Name`.
 */
name: string, 
/**
 * What it does: for the person, and for a parent model choosing to call it.
 */
description?: string, 
/**
 * Its instructions (system prompt).
 */
instructions?: string, 
/**
 * A note for a caller's system prompt while it is offered as a tool (when to hand it work).
 */
prompt?: string, 
/**
 * Provider profile (default: the default profile).
 */
profile?: string, 
/**
 * Model (default: the profile's).
 */
model?: string, 
/**
 * The toolsets it has, by name.
 */
toolsets?: Array<string>, 
/**
 * Most model calls with tools before its final answer (default: the settings').
 */
maxIterations?: number, 
/**
 * Approval defaults by tool name: `ask` or `deny` where the tool would otherwise run.
 */
approval?: { [key in string]: ApprovalPolicy }, 
/**
 * Called as a tool, its answer streams as the parent's answer and ends the parent's turn.
 */
takesControl?: boolean, 
/**
 * Called as a tool, it runs alone: only when forced, never beside other tools.
 */
exclusive?: boolean, 
/**
 * Structured fields a caller may fill besides its message.
 */
inputs?: Array<AgentInput>, };

export type AgentInput = { 
/**
 * The field's name.
 */
name: string, 
/**
 * What to put in it, for the calling model.
 */
description?: string, 
/**
 * Its JSON type.
 */
type: InputKind, 
/**
 * Whether a call must fill it.
 */
required?: boolean, };

export type InputKind = "string" | "number" | "integer" | "boolean";

export type AgentInfo = { 
/**
 * The definition.
 */
config: AgentConfig, 
/**
 * Its name as a tool.
 */
toolName: string, 
/**
 * What keeps it from running as set up (a deleted profile, an unknown toolset, a tool that
 * no longer exists); it still runs without what is missing.
 */
problems: Array<string>, };

export type ToolsetInfo = { 
/**
 * The definition.
 */
toolset: Toolset, 
/**
 * The tools it gives now.
 */
tools: Array<string>, 
/**
 * Entries that name nothing now, each with why.
 */
missing: Array<string>, };

export type AgentsOverview = { 
/**
 * Where the file is.
 */
configPath: string | null, 
/**
 * Why the file cannot be used, if it cannot.
 */
problem: string | null, 
/**
 * Agents, in file order.
 */
agents: Array<AgentInfo>, 
/**
 * Toolsets, in file order.
 */
toolsets: Array<ToolsetInfo>, };

/** What an unset limit means: the engine's defaults (`EngineConfig::default()`). */
export const ENGINE_DEFAULTS = {
  "limits": {
    "maxIterations": 10,
    "maxToolCallsPerRound": 10,
    "toolTimeoutSecs": 60,
    "idleTimeoutSecs": 120,
    "toolResultChars": 16000,
    "compactAtPercent": 80
  },
  "retry": {
    "maxRetries": 3,
    "baseDelayMs": 1000
  }
} as const satisfies { limits: Limits; retry: Retry };

/** The range of every limit (`settings::LIMIT_BOUNDS`); `update_settings` refuses values outside it. */
export const LIMIT_BOUNDS = {
  "limits": {
    "compactAtPercent": {
      "min": 50,
      "max": 95
    },
    "idleTimeoutSecs": {
      "min": 5,
      "max": 3600
    },
    "maxIterations": {
      "min": 1,
      "max": 50
    },
    "maxToolCallsPerRound": {
      "min": 1,
      "max": 50
    },
    "toolResultChars": {
      "min": 1000,
      "max": 200000
    },
    "toolTimeoutSecs": {
      "min": 1,
      "max": 600
    }
  },
  "retry": {
    "baseDelayMs": {
      "min": 100,
      "max": 60000
    },
    "maxRetries": {
      "min": 0,
      "max": 10
    }
  }
} as const satisfies { limits: Record<keyof Limits, { min: number; max: number }>; retry: Record<keyof Retry, { min: number; max: number }> };

/** Every `ErrorKind`. */
export const ERROR_KINDS = [
  "auth",
  "rateLimited",
  "overloaded",
  "contextLength",
  "badRequest",
  "notFound",
  "server",
  "network",
  "timeout",
  "cancelled",
  "protocol",
  "config",
  "storage",
  "internal"
] as const satisfies readonly ErrorKind[];

/** Every `ApprovalChoice`, in declaration order. */
export const APPROVAL_CHOICES = [
  "once",
  "chat",
  "always",
  "deny"
] as const satisfies readonly ApprovalChoice[];

/** Every provider kind, in the order pickers list them. */
export const PROVIDER_KINDS = [
  {
    "id": "openai",
    "label": "OpenAI / OpenAI-compatible (Ollama, LM Studio, vLLM, llama.cpp, OpenRouter)",
    "defaultBaseUrl": "https://api.openai.com/v1",
    "keyEnv": "OPENAI_API_KEY",
    "capabilities": {
      "listsModels": true
    }
  },
  {
    "id": "openai-responses",
    "label": "OpenAI (Responses API)",
    "defaultBaseUrl": "https://api.openai.com/v1",
    "keyEnv": "OPENAI_API_KEY",
    "capabilities": {
      "listsModels": true
    }
  },
  {
    "id": "anthropic",
    "label": "Anthropic (Claude)",
    "defaultBaseUrl": "https://api.anthropic.com/v1",
    "keyEnv": "ANTHROPIC_API_KEY",
    "capabilities": {
      "listsModels": true
    }
  },
  {
    "id": "gemini",
    "label": "Google Gemini",
    "defaultBaseUrl": "https://generativelanguage.googleapis.com/v1beta",
    "keyEnv": "GEMINI_API_KEY",
    "capabilities": {
      "listsModels": true
    }
  }
] as const satisfies readonly ProviderKindInfo[];

/** The services and local servers Add provider offers, with kind and address filled in. */
export const PROVIDER_PRESETS = [
  {
    "id": "openai",
    "label": "OpenAI",
    "kind": "openai",
    "baseUrl": "https://api.openai.com/v1",
    "needsKey": true,
    "model": "gpt-4o-mini",
    "local": false
  },
  {
    "id": "openai-responses",
    "label": "OpenAI (Responses API)",
    "kind": "openai-responses",
    "baseUrl": "https://api.openai.com/v1",
    "needsKey": true,
    "model": "gpt-4.1-mini",
    "local": false
  },
  {
    "id": "anthropic",
    "label": "Anthropic (Claude)",
    "kind": "anthropic",
    "baseUrl": "https://api.anthropic.com/v1",
    "needsKey": true,
    "model": "claude-sonnet-4-5",
    "local": false
  },
  {
    "id": "gemini",
    "label": "Google Gemini",
    "kind": "gemini",
    "baseUrl": "https://generativelanguage.googleapis.com/v1beta",
    "needsKey": true,
    "model": "gemini-2.5-flash",
    "local": false
  },
  {
    "id": "openrouter",
    "label": "OpenRouter",
    "kind": "openai",
    "baseUrl": "https://openrouter.ai/api/v1",
    "needsKey": true,
    "model": null,
    "local": false
  },
  {
    "id": "ollama",
    "label": "Ollama",
    "kind": "openai",
    "baseUrl": "http://localhost:11434/v1",
    "needsKey": false,
    "model": null,
    "local": true
  },
  {
    "id": "lmstudio",
    "label": "LM Studio",
    "kind": "openai",
    "baseUrl": "http://localhost:1234/v1",
    "needsKey": false,
    "model": null,
    "local": true
  },
  {
    "id": "vllm",
    "label": "vLLM",
    "kind": "openai",
    "baseUrl": "http://localhost:8000/v1",
    "needsKey": false,
    "model": null,
    "local": false
  },
  {
    "id": "llamacpp",
    "label": "llama.cpp server",
    "kind": "openai",
    "baseUrl": "http://localhost:8080/v1",
    "needsKey": false,
    "model": null,
    "local": false
  }
] as const satisfies readonly Preset[];

/** How many of a conversation's last messages `open_conversation` returns. */
export const OPEN_PAGE = 60 as const;

/** The longest name of an agent or a toolset (`agents::NAME_MAX_CHARS`). */
export const AGENT_NAME_MAX = 48 as const;
