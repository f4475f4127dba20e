// An external command run once per request (e.g. a CLI agent in print mode with stream-JSON
// output). The argv template's placeholders are filled in, the prompt is also written to
// stdin, the process is killed on timeout, and tool-use events are read from its output.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errorMessage, nestedDeeperThan } from '../../shared/index.js';
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

const KILL_GRACE_MS = 2000;

/** Settings of a command backend. */
interface CommandBackendOptions {
  /** argv; `{prompt}`, `{system}`, `{tools_file}` and `{tool}` are replaced in each element. */
  template: readonly string[];
  timeoutMs: number;
  /** The tool under test, for `{tool}`. */
  toolName?: string;
}

interface CommandOutput {
  stdout: string;
  code: number | null;
}

/** The `{name}` variables of a command template (each documented in docs/optimization.md, Model backends). */
export const COMMAND_TEMPLATE_VARIABLES = ['prompt', 'system', 'tools_file', 'tool'] as const;
export type CommandTemplateVariable = (typeof COMMAND_TEMPLATE_VARIABLES)[number];
const TEMPLATE_VARIABLE = new RegExp(`\\{(${COMMAND_TEMPLATE_VARIABLES.join('|')})\\}`, 'g');

/** A command template as a model backend. */
export class CommandBackend implements ModelBackend {
  readonly kind = 'command';
  readonly #options: CommandBackendOptions;

  constructor(options: CommandBackendOptions) {
    this.#options = options;
  }

  async chooseTools(prompt: string, tools: readonly EvalTool[], options: BackendRequestOptions = {}): Promise<ToolChoice> {
    const { stdout } = await this.#run(EVAL_SYSTEM_PROMPT, prompt, tools, options);
    const events = parseJsonLines(stdout);
    if (!events.length) throw replyInvalid(`the command printed no stream-JSON events: "${preview(stdout)}"`);
    const calledTools: string[] = [];
    for (const event of events) collectToolUses(event, calledTools);
    const text = collectText(events);
    return { calledTools, ...(text ? { text } : {}) };
  }

  async complete(system: string, user: string, options: BackendRequestOptions = {}): Promise<string> {
    const { stdout } = await this.#run(system, user, [], options);
    const events = parseJsonLines(stdout);
    const text = events.length ? collectText(events) : stdout.trim();
    if (!text) throw replyInvalid('the command printed no text');
    return text;
  }

  async #run(system: string, prompt: string, tools: readonly EvalTool[], options: BackendRequestOptions): Promise<CommandOutput> {
    const dir = await mkdtemp(path.join(tmpdir(), 'loadout-eval-'));
    try {
      const toolsFile = path.join(dir, 'tools.json');
      await writeFile(toolsFile, JSON.stringify({ tools }));
      const values: Record<CommandTemplateVariable, string> = { prompt, system, tools_file: toolsFile, tool: this.#options.toolName ?? '' };
      const argv = this.#options.template.map((part) => part.replace(TEMPLATE_VARIABLE, (_m, key: CommandTemplateVariable) => values[key]));
      const output = await runProcess(argv, prompt, this.#options.timeoutMs, options.signal);
      if (output.code !== 0) throw replyInvalid(`the command ${argv[0]} exited with code ${output.code}: "${preview(output.stdout)}"`);
      return output;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

// Runs in its own process group so a timeout kills the agent and everything it started.
function runProcess(argv: readonly string[], stdin: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    let stdout = '';
    let expired = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (sig: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // already gone
      }
    };
    const stop = (): void => {
      killGroup('SIGTERM');
      killTimer ??= setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => {
      expired = true;
      stop();
    }, timeoutMs);
    timer.unref();
    signal?.addEventListener('abort', stop, { once: true });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(
        backendUnavailable(
          `the command ${argv[0]} could not be started (${errorMessage(error)}); fix optimization.command in servers.yaml`,
          error,
        ),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // A group that ended on SIGTERM is not killed again: its id may belong to another group by then.
      clearTimeout(killTimer);
      signal?.removeEventListener('abort', stop);
      if (signal?.aborted) reject(backendUnavailable('the evaluation was cancelled'));
      else if (expired)
        reject(
          replyInvalid(`the command ${argv[0]} did not finish within ${timeoutMs / 1000} s and was killed (optimization.timeout_seconds)`),
        );
      else resolve({ stdout, code });
    });
  });
}

function parseJsonLines(stdout: string): unknown[] {
  const events: unknown[] = [];
  for (const line of stdout.split('\n')) {
    const trimmed = line.trim();
    // A line nested past the limit would overflow the recursive walks below: skipped like a garbled one.
    if (!trimmed.startsWith('{') || nestedDeeperThan(trimmed)) continue;
    try {
      events.push(JSON.parse(trimmed));
    } catch {
      // a partial or garbled line is skipped; the other events still count
    }
  }
  return events;
}

// Claude-style `{"type":"tool_use","name":…}` blocks and OpenAI-style `tool_calls[].function.name`, at any depth.
function collectToolUses(value: unknown, into: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) collectToolUses(item, into);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  if (record.type === 'tool_use' && typeof record.name === 'string') into.push(record.name);
  const fn = record.function as Record<string, unknown> | undefined;
  if (record.type === 'function' && typeof fn?.name === 'string') into.push(fn.name);
  for (const child of Object.values(record)) if (child && typeof child === 'object') collectToolUses(child, into);
}

// The final `{"type":"result","result":…}` if present, else the assistant's text blocks.
function collectText(events: unknown[]): string {
  for (const event of events) {
    const record = event as Record<string, unknown>;
    if (record.type === 'result' && typeof record.result === 'string') return record.result;
  }
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    if (record.type === 'text' && typeof record.text === 'string') texts.push(record.text);
    else Object.values(record).forEach(walk);
  };
  events.forEach(walk);
  return texts.join('');
}
