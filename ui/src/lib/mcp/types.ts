/**
 * The shapes of MCP's prompts, resources, completion, elicitation, sampling, roots and logging as
 * the UI reads them. They are the service's (generated into `bindings.ts` by the engine branches);
 * this module is the one place the UI names them, so where they come from changes here only.
 */
/** A file attached to a person's message, as stored and shown (core's `Attachment`). */
export interface Attachment {
  id: string;
  name: string;
  mimeType: string;
  kind: 'image' | 'pdf' | 'text';
  size: number;
  width?: number;
  height?: number;
  pages?: number;
}

/** One argument a prompt takes. */
export interface PromptArgument {
  name: string;
  title?: string | null;
  description?: string | null;
  required: boolean;
}

/** A prompt a server offers (`prompts/list`). */
export interface PromptInfo {
  name: string;
  title?: string | null;
  description?: string | null;
  arguments: PromptArgument[];
}

/** What a prompt expands to: the text to send and the files it carries (images, resources). */
export interface PromptMessages {
  text: string;
  attachments: Attachment[];
}

/** A resource a server lists. */
export interface ResourceInfo {
  uri: string;
  name: string;
  title?: string | null;
  description?: string | null;
  mimeType?: string | null;
  size?: number | null;
}

/** A resource template (`resources/templates/list`): `uriTemplate` is RFC 6570, `{name}` parameters. */
export interface ResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  title?: string | null;
  description?: string | null;
  mimeType?: string | null;
}

export interface ResourceList {
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
}

/** What a completion is for: a prompt's argument or a resource template's parameter. */
export type CompletionRef = { type: 'prompt'; name: string } | { type: 'resource'; uri: string };

/** The levels of `logging/setLevel`, lowest first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One `notifications/message` a server sent. */
export interface ServerLogLine {
  level: LogLevel;
  logger?: string | null;
  text: string;
}

/** A server's request for input during a tool call (`elicitation/create`). */
export interface ElicitationRequest {
  /** The id the answer goes back with. */
  id: string;
  /** The tool call it serves. */
  callId: string;
  server: string;
  tool: string;
  message: string;
  mode: 'form' | 'url';
  /** Form mode: the requested JSON Schema (a flat object of primitive properties). */
  schema?: unknown;
  /** URL mode: the page to open. */
  url?: string | null;
}

export type ElicitationAction = 'accept' | 'decline' | 'cancel';

/** One message of a sampling request, as text. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  text: string;
}

/** A server's request for a model completion (`sampling/createMessage`). */
export interface SamplingRequest {
  id: string;
  callId: string;
  server: string;
  tool: string;
  messages: SamplingMessage[];
  systemPrompt?: string | null;
  /** What the server asked for. */
  maxTokens: number;
  /** What will be allowed (the app's bound). */
  cappedMaxTokens: number;
}

/** The events that ask the person during a call (they arrive on the turn's stream). */
export type AskEvent =
  | ({ type: 'elicitationRequested' } & ElicitationRequest)
  | { type: 'elicitationResolved'; id: string; action: ElicitationAction }
  | ({ type: 'samplingRequested' } & SamplingRequest)
  | { type: 'samplingResolved'; id: string; approved: boolean };

/** The folders servers may work in: for all servers and per server. */
export interface RootsConfig {
  all: string[];
  servers: Record<string, string[]>;
}

/** The commands of these features, as the shell offers them. */
export interface McpFeatures {
  mcpPrompts(server: string): Promise<PromptInfo[]>;
  mcpGetPrompt(server: string, name: string, args: Record<string, string>): Promise<PromptMessages>;
  mcpResources(server: string): Promise<ResourceList>;
  mcpAttachResource(server: string, uri: string): Promise<Attachment>;
  mcpComplete(server: string, reference: CompletionRef, argument: string, value: string, context: Record<string, string>): Promise<string[]>;
  mcpSetLogLevel(server: string, level: LogLevel): Promise<void>;
  mcpServerLog(server: string): Promise<ServerLogLine[]>;
  resolveElicitation(id: string, action: ElicitationAction, content: Record<string, unknown> | null): Promise<void>;
  resolveSampling(id: string, approve: boolean, messages: string[] | null): Promise<void>;
  mcpRoots(): Promise<RootsConfig>;
  mcpAddRoot(server: string | null): Promise<RootsConfig>;
  mcpRemoveRoot(server: string | null, path: string): Promise<RootsConfig>;
}
