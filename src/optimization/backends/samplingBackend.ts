// MCP sampling: the connected client's own model answers `sampling/createMessage`. When the
// client declared `sampling.tools`, the tools are passed natively and tool_use blocks are read;
// otherwise the tools are listed in the system prompt and the model answers with a JSON choice.
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/server';
import { errorMessage } from '../../shared/index.js';
import {
  EVAL_SYSTEM_PROMPT,
  backendUnavailable,
  extractJson,
  replyInvalid,
  type BackendRequestOptions,
  type EvalTool,
  type ModelBackend,
  type ToolChoice,
} from './modelBackend.js';

const MAX_TOKENS = 1024;

// Errors meaning the client will never answer sampling (it is gone, or never offered it): the
// first is local to the SDK, the second the client's answer.
function clientCannotSample(error: unknown): boolean {
  if (SdkError.isInstance(error)) return error.code === SdkErrorCode.ConnectionClosed;
  return ProtocolError.isInstance(error) && error.code === (ProtocolErrorCode.MethodNotFound as number);
}

/** The part of an MCP server session the sampling backend needs (a port, so no gateway import). */
export interface SamplingPort {
  /** Whether the client declared `sampling.tools`. */
  supportsTools: boolean;
  createMessage(
    params: CreateMessageRequest['params'],
    options: { signal?: AbortSignal; timeout: number },
  ): Promise<Pick<CreateMessageResult, 'content'> | { content: unknown }>;
}

/** Sampling through the connected MCP client. */
export class SamplingBackend implements ModelBackend {
  readonly kind = 'sampling';
  readonly #port: SamplingPort;
  readonly #timeoutMs: number;

  constructor(port: SamplingPort, timeoutMs: number) {
    this.#port = port;
    this.#timeoutMs = timeoutMs;
  }

  async chooseTools(prompt: string, tools: readonly EvalTool[], options: BackendRequestOptions = {}): Promise<ToolChoice> {
    const user = { role: 'user' as const, content: { type: 'text' as const, text: prompt } };
    if (this.#port.supportsTools) {
      const blocks = await this.#create(
        {
          messages: [user],
          systemPrompt: EVAL_SYSTEM_PROMPT,
          maxTokens: MAX_TOKENS,
          tools: tools.map((t) => ({
            name: t.name,
            description: t.description,
            inputSchema: { type: 'object' as const, ...t.inputSchema },
          })),
          toolChoice: { mode: 'auto' },
        },
        options,
      );
      const calledTools = blocks.filter((b) => b.type === 'tool_use' && typeof b.name === 'string').map((b) => b.name as string);
      const text = textOf(blocks);
      return { calledTools, ...(text ? { text } : {}) };
    }
    const catalog = tools.map((tool) => `- ${tool.name}: ${tool.description}`).join('\n');
    const system = `${EVAL_SYSTEM_PROMPT}\nTools:\n${catalog}\nReply with JSON only: {"tool": "<name of the tool you would call>"} or {"tool": null} if you would answer directly.`;
    const text = textOf(await this.#create({ messages: [user], systemPrompt: system, maxTokens: MAX_TOKENS }, options));
    const choice = extractJson(text) as { tool?: unknown };
    if (!choice || typeof choice !== 'object' || !('tool' in choice) || (choice.tool !== null && typeof choice.tool !== 'string')) {
      throw replyInvalid(`the client's model did not answer {"tool": …}: "${text.slice(0, 120)}"`);
    }
    return { calledTools: typeof choice.tool === 'string' ? [choice.tool] : [], text };
  }

  async complete(system: string, user: string, options: BackendRequestOptions = {}): Promise<string> {
    const text = textOf(
      await this.#create(
        { messages: [{ role: 'user', content: { type: 'text', text: user } }], systemPrompt: system, maxTokens: 4096 },
        options,
      ),
    );
    if (!text) throw replyInvalid("the client's model answered without text");
    return text;
  }

  async #create(params: CreateMessageRequest['params'], options: BackendRequestOptions): Promise<Array<Record<string, unknown>>> {
    // A child signal per request: the SDK leaves its abort listener on the signal it is given,
    // and one evaluation sends dozens of requests under the same tool call's signal.
    const request = new AbortController();
    const abort = (): void => request.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      const result = await this.#port.createMessage(params, { signal: request.signal, timeout: this.#timeoutMs });
      const content = result.content;
      return (Array.isArray(content) ? content : [content]).filter((b): b is Record<string, unknown> => !!b && typeof b === 'object');
    } catch (error) {
      if (clientCannotSample(error)) {
        throw backendUnavailable(`the client cannot answer sampling/createMessage (${errorMessage(error)})`, error);
      }
      throw replyInvalid(`sampling/createMessage failed: ${errorMessage(error)}`, error);
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  }
}

function textOf(blocks: Array<Record<string, unknown>>): string {
  return blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('');
}
