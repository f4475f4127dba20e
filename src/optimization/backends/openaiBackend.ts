// An OpenAI-compatible chat-completions endpoint with tool calling (Ollama, vLLM, llama.cpp
// server, LM Studio, hosted APIs), over Node's fetch with a per-request timeout. The reply is
// parsed loosely: only the fields we read must be there.
import * as z from 'zod';
import { errorMessage } from '../../shared/index.js';
import {
  EVAL_SYSTEM_PROMPT,
  backendUnavailable,
  preview,
  replyInvalid,
  type BackendRequestOptions,
  type EvalTool,
  type ModelBackend,
  type ToolChoice,
} from './modelBackend.js';

const ChatReplySchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullish(),
          tool_calls: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }) })).nullish(),
        }),
      }),
    )
    .min(1),
});

/** Settings of an OpenAI-compatible backend. */
interface OpenAiBackendOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

/** Chat completions with tools over HTTP. */
export class OpenAiBackend implements ModelBackend {
  readonly kind = 'openai';
  readonly #options: OpenAiBackendOptions;
  readonly #url: string;

  constructor(options: OpenAiBackendOptions) {
    this.#options = options;
    this.#url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async chooseTools(prompt: string, tools: readonly EvalTool[], options: BackendRequestOptions = {}): Promise<ToolChoice> {
    const message = await this.#chat(
      {
        messages: [
          { role: 'system', content: EVAL_SYSTEM_PROMPT },
          { role: 'user', content: prompt },
        ],
        tools: tools.map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
        })),
        tool_choice: 'auto',
      },
      options,
    );
    return {
      calledTools: (message.tool_calls ?? []).map((call) => call.function.name),
      ...(message.content ? { text: message.content } : {}),
    };
  }

  async complete(system: string, user: string, options: BackendRequestOptions = {}): Promise<string> {
    const message = await this.#chat(
      {
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
      },
      options,
    );
    if (!message.content) throw replyInvalid(`${this.#url} answered without any text`);
    return message.content;
  }

  async #chat(
    body: Record<string, unknown>,
    options: BackendRequestOptions,
  ): Promise<z.infer<typeof ChatReplySchema>['choices'][number]['message']> {
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.#url, {
        method: 'POST',
        headers,
        signal,
        body: JSON.stringify({ model: this.#options.model, temperature: 0, ...body }),
      });
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw backendUnavailable('the evaluation was cancelled', error);
      if (timeout.aborted)
        throw replyInvalid(`${this.#url} did not answer within ${this.#options.timeoutMs / 1000} s (optimization.timeout_seconds)`, error);
      throw backendUnavailable(
        `the OpenAI-compatible endpoint ${this.#url} is unreachable (${causeOf(error)}); start it or fix optimization.base_url in servers.yaml`,
        error,
      );
    }
    if (!response.ok) {
      const detail = `${this.#url} answered HTTP ${response.status}: ${preview(text)}`;
      // A server-side hiccup may pass; a wrong URL, model or key will not.
      if (response.status >= 500 || response.status === 429) throw replyInvalid(detail);
      throw backendUnavailable(`${detail}; check optimization.base_url, model and api_key_env`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw replyInvalid(`${this.#url} answered with malformed JSON: "${preview(text)}"`);
    }
    const parsed = ChatReplySchema.safeParse(json);
    if (!parsed.success) throw replyInvalid(`${this.#url} answered without choices[0].message: "${preview(text)}"`);
    return parsed.data.choices[0]!.message;
  }
}

// fetch wraps the socket error; its cause says what actually happened (ECONNREFUSED, ENOTFOUND).
function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return errorMessage(cause ?? error);
}
