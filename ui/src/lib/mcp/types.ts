/**
 * The shapes of MCP's prompts, resources, completion, elicitation, sampling, roots and logging as
 * the UI reads them. They are the service's (generated into `bindings.ts` by the engine branches);
 * this module is the one place the UI names them, so where they come from changes here only.
 */
import type {
  Attachment,
  ChatEvent,
  Completion,
  CompletionRef,
  ElicitationAction,
  ElicitationMode,
  FieldChoice,
  FieldKind,
  FormField,
  LogLevel,
  McpPrompts,
  McpResource,
  McpResources,
  McpServerInfo,
  PromptArgument,
  PromptInfo,
  PromptMessages,
  ResourceTemplateInfo,
  SamplingMessage,
} from '../ipc/bindings';

export type {
  Attachment,
  Completion,
  CompletionRef,
  ElicitationAction,
  ElicitationMode,
  FieldChoice,
  FieldKind,
  FormField,
  LogLevel,
  McpPrompts,
  McpResource,
  McpResources,
  PromptArgument,
  PromptInfo,
  PromptMessages,
  ResourceTemplateInfo,
  SamplingMessage,
};

/** The levels of `logging/setLevel`, lowest first. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** The events that ask the person during a call (they arrive on the turn's stream). */
export type AskEvent = Extract<ChatEvent, { type: 'elicitationRequested' | 'elicitationResolved' | 'samplingRequested' | 'samplingResolved' }>;

/** A server's request for input during a tool call (`elicitation/create`), as the turn's event carries it. */
export type ElicitationRequest = Omit<Extract<ChatEvent, { type: 'elicitationRequested' }>, 'type'>;

/** A server's request for a model completion (`sampling/createMessage`). */
export type SamplingRequest = Omit<Extract<ChatEvent, { type: 'samplingRequested' }>, 'type'>;

/** The commands of these features, as the shell offers them. */
export interface McpFeatures {
  mcpPrompts(server: string): Promise<McpPrompts>;
  mcpGetPrompt(server: string, name: string, args: Record<string, string>): Promise<PromptMessages>;
  mcpResources(server: string): Promise<McpResources>;
  mcpExpandTemplate(uriTemplate: string, values: Record<string, string>): Promise<string>;
  mcpAttachResource(server: string, uri: string): Promise<Attachment>;
  mcpComplete(server: string, reference: CompletionRef, argument: string, value: string, context: Record<string, string>): Promise<Completion>;
  mcpSetLogLevel(server: string, level: LogLevel): Promise<McpServerInfo>;
  answerElicitation(requestId: string, action: ElicitationAction, content?: Record<string, unknown> | null): Promise<void>;
  answerSampling(requestId: string, approve: boolean, messages?: SamplingMessage[] | null): Promise<void>;
  /** A server's own roots (folders it is told of), or every server's for `null`. */
  mcpRoots(server?: string | null): Promise<string[]>;
  /** Adds a folder chosen in the native dialog; resolves with the list. */
  mcpAddRoot(server?: string | null): Promise<string[]>;
  mcpRemoveRoot(server: string | null, path: string): Promise<string[]>;
}
