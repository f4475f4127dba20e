// What every model backend offers the optimization loop: pick tools for a prompt (evaluation)
// and complete a text request (generators). Backends report two kinds of failure: the backend
// itself is unusable (BACKEND_UNAVAILABLE: stop) or one reply was bad (BACKEND_REPLY_INVALID).
import { LoadoutError, oneLine } from '../../shared/index.js';

/** A tool as presented to the model under evaluation. */
export interface EvalTool {
  /** A client-safe name (`server_tool`). */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What the model did with a prompt. */
export interface ToolChoice {
  /** Names of the tools it called, in order. */
  calledTools: string[];
  /** Its text, if any (kept as the run's reasoning). */
  text?: string;
}

/** Per-request options. */
export interface BackendRequestOptions {
  signal?: AbortSignal;
}

/** A model that can evaluate descriptions and generate text. */
export interface ModelBackend {
  /** `openai`, `sampling` or `command`, for stored runs and messages. */
  readonly kind: string;
  /** Present `tools` and the user's `prompt`; report which tools the model called. */
  chooseTools(prompt: string, tools: readonly EvalTool[], options?: BackendRequestOptions): Promise<ToolChoice>;
  /** Answer `user` under `system` with plain text. */
  complete(system: string, user: string, options?: BackendRequestOptions): Promise<string>;
}

/** The system prompt of an evaluation: behave like an agent deciding whether a tool helps. */
export const EVAL_SYSTEM_PROMPT =
  'You are a helpful assistant with access to tools. Call a tool only when it is the right way to fulfil the request; ' +
  'otherwise answer directly without calling any tool.';

/** A bad reply (malformed output, timeout of one request): recorded on the run, the evaluation goes on. */
export function replyInvalid(message: string, cause?: unknown): LoadoutError {
  return new LoadoutError('BACKEND_REPLY_INVALID', message, { cause });
}

/** The backend cannot be used at all (down, refused, misconfigured): the evaluation stops. */
export function backendUnavailable(message: string, cause?: unknown): LoadoutError {
  return new LoadoutError('BACKEND_UNAVAILABLE', message, { cause });
}

/** The first JSON value (object or array) in a model's text, tolerating code fences and chatter. */
export function extractJson(text: string): unknown {
  const unfenced = text.replace(/```(?:json)?/gi, '');
  const start = unfenced.search(/[[{]/);
  if (start < 0) throw replyInvalid(`the model did not answer with JSON: "${preview(text)}"`);
  const open = unfenced[start]!;
  const close = open === '[' ? ']' : '}';
  for (let end = unfenced.lastIndexOf(close); end > start; end = unfenced.lastIndexOf(close, end - 1)) {
    try {
      return JSON.parse(unfenced.slice(start, end + 1));
    } catch {
      // try a shorter span: trailing chatter may contain the closing bracket too
    }
  }
  throw replyInvalid(`the model's JSON could not be parsed: "${preview(text)}"`);
}

/** The start of a long text, on one line, for error messages. */
export function preview(text: string): string {
  return oneLine(text, 120);
}
