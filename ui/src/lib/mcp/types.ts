/**
 * The shapes of MCP's prompts, resources, completion, elicitation, sampling, roots and logging as
 * the UI reads them. They are the service's (generated into `bindings.ts` by the engine branches);
 * this module is the one place the UI names them, so where they come from changes here only.
 */
import type { Attachment } from '../ipc/bindings';

export type { Attachment };

/** One argument a prompt takes. */
export interface PromptArgument {
  name: string;
  title: string | null;
  description: string | null;
  required: boolean;
}

/** A prompt a server offers (`prompts/list`). */
export interface PromptInfo {
  name: string;
  title: string | null;
  description: string | null;
  arguments: PromptArgument[];
}

/** A server's prompts, and the entries it sent that could not be used (why, in words). */
export interface McpPrompts {
  server: string;
  prompts: PromptInfo[];
  skipped: string[];
}

/** What a prompt expands to: the text to send (all messages joined) and the files it carries. */
export interface PromptMessages {
  server: string;
  prompt: string;
  description: string | null;
  text: string;
  messages: { role: 'user' | 'assistant'; text: string }[];
  attachments: Attachment[];
  notes: string[];
}

/** A resource a server lists. */
export interface McpResource {
  uri: string;
  name: string;
  title: string | null;
  description: string | null;
  mimeType: string | null;
  size: number | null;
  subscribed: boolean;
  /** Updates announced since it was last read. */
  updates: number;
}

/** A resource template (`resources/templates/list`): `uriTemplate` is RFC 6570, `variables` its parameters. */
export interface ResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  title: string | null;
  description: string | null;
  mimeType: string | null;
  variables: string[];
  /** Why it cannot be used, if so. */
  problem: string | null;
}

/** A server's resources and templates, and the entries that could not be used. */
export interface McpResources {
  server: string;
  resources: McpResource[];
  templates: ResourceTemplateInfo[];
  skipped: string[];
}

/** What a completion is for: a prompt's argument or a resource template's parameter. */
export type CompletionRef = { type: 'prompt'; name: string } | { type: 'resource'; uri: string };

/** A server's suggestions for one argument. */
export interface Completion {
  values: string[];
  total: number | null;
  hasMore: boolean;
}

/** The levels of `logging/setLevel`, lowest first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How an elicitation asks: a form, or a page to open. */
export type ElicitationMode = 'form' | 'url';
export type ElicitationAction = 'accept' | 'decline' | 'cancel';

export interface FieldChoice {
  value: string;
  title: string;
}

/** One field of an elicitation form, as the engine read it from the requested schema. */
export type FieldKind =
  | { type: 'text'; format?: string; minLength?: number; maxLength?: number; default?: string }
  | { type: 'number'; integer: boolean; minimum?: number; maximum?: number; default?: number }
  | { type: 'boolean'; default?: boolean }
  | { type: 'choice'; choices: FieldChoice[]; multiple: boolean; minItems?: number; maxItems?: number; default: string[] };

export interface FormField {
  name: string;
  title: string;
  description?: string;
  required: boolean;
  kind: FieldKind;
}

/** A server's request for input during a tool call (`elicitation/create`), as the turn's event carries it. */
export interface ElicitationRequest {
  /** The tool call it serves. */
  callId: string;
  /** The id the answer goes back with. */
  requestId: string;
  server: string;
  tool: string;
  message: string;
  mode: ElicitationMode;
  fields: FormField[];
  /** URL mode: the page to open. */
  url?: string;
  /** Declined without asking (a schema the form cannot show, a URL that is not https): why. */
  refused?: string;
}

/** One message of a sampling request, as text. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  text: string;
}

/** A server's request for a model completion (`sampling/createMessage`). */
export interface SamplingRequest {
  callId: string;
  requestId: string;
  server: string;
  tool: string;
  messages: SamplingMessage[];
  systemPrompt?: string;
  /** The tokens that will be allowed. */
  maxTokens: number;
  /** What the server asked for, when it was more than is allowed. */
  requestedMaxTokens?: number;
  modelPreferences?: string;
}

/** The events that ask the person during a call (they arrive on the turn's stream). */
export type AskEvent =
  | ({ type: 'elicitationRequested' } & ElicitationRequest)
  | { type: 'elicitationResolved'; callId: string; requestId: string; action: ElicitationAction }
  | ({ type: 'samplingRequested' } & SamplingRequest)
  | { type: 'samplingResolved'; callId: string; requestId: string; approved: boolean };

/** The commands of these features, as the shell offers them. */
export interface McpFeatures {
  mcpPrompts(server: string): Promise<McpPrompts>;
  mcpGetPrompt(server: string, name: string, args: Record<string, string>): Promise<PromptMessages>;
  mcpResources(server: string): Promise<McpResources>;
  mcpExpandTemplate(uriTemplate: string, values: Record<string, string>): Promise<string>;
  mcpAttachResource(server: string, uri: string): Promise<Attachment>;
  mcpComplete(server: string, reference: CompletionRef, argument: string, value: string, context: Record<string, string>): Promise<Completion>;
  mcpSetLogLevel(server: string, level: LogLevel): Promise<unknown>;
  answerElicitation(requestId: string, action: ElicitationAction, content: Record<string, unknown> | null): Promise<unknown>;
  answerSampling(requestId: string, approve: boolean, messages: SamplingMessage[] | null): Promise<unknown>;
  /** A server's own roots (folders it is told of), or every server's for `null`. */
  mcpRoots(server?: string | null): Promise<string[]>;
  /** Adds a folder chosen in the native dialog; resolves with the list. */
  mcpAddRoot(server?: string | null): Promise<string[]>;
  mcpRemoveRoot(server: string | null, path: string): Promise<string[]>;
}
