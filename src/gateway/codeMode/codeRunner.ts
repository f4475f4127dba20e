// Runs one run-code script in a worker thread of its own (codeWorker.ts) and answers its calls: the
// gateway's side of the boundary. It keeps the run's limits where the script cannot reach them:
// the wall-time deadline (the thread is ended then, whatever it is doing), the number of calls,
// and the memory the thread's interpreter may take. Loaded on the first run-code call only.
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../../shared/index.js';
import type { FromWorker, ScriptError, ToWorker, WorkerStart } from './codeMessages.js';

/** What the script's calls reach: the gateway's call pipeline and its search. */
export interface CodeHost {
  /** A tool's CallToolResult, as a call-tool call would answer it; `signal` aborts when the run ends. */
  callTool(name: string, args: unknown, signal: AbortSignal): Promise<unknown>;
  /** The ranked tools discover-all-tools would list, as data. */
  search(query: string, options: unknown): Promise<unknown>;
}

/** What one run may spend. */
export interface CodeLimits {
  readonly timeoutMs: number;
  readonly memoryBytes: number;
  readonly maxCalls: number;
}

/** Why a run ended without an answer. */
export type CodeFailure = 'time' | 'memory' | 'script' | 'cancelled';

/** How a run ended: the script's answer as JSON text, or why it has none. */
export type CodeEnd =
  | { readonly kind: 'returned'; readonly json: string }
  | { readonly kind: 'failed'; readonly reason: CodeFailure; readonly message: string };

/** How a run ended, with what the script logged and how many calls it made. */
export type CodeOutcome = CodeEnd & { readonly logs: readonly string[]; readonly calls: number };

// Bytes of console output kept from one run: the answer is cut far below this anyway.
const LOG_BYTES_KEPT = 1024 * 1024;

/** Run `code` within `limits`; `cancel` (the client's cancellation) ends it early. Never rejects. */
export function runScript(code: string, limits: CodeLimits, host: CodeHost, cancel: AbortSignal): Promise<CodeOutcome> {
  const start: WorkerStart = { code, memoryBytes: limits.memoryBytes, deadline: Date.now() + limits.timeoutMs };
  // Beside this file both in the tsc output and in the bundle (scripts/bundle.mjs names the entry so).
  const worker = new Worker(new URL('./codeWorker.js', import.meta.url), {
    workerData: start,
    // The thread's own output is never the protocol's: stdout is, in stdio mode.
    stdout: true,
    stderr: true,
    // The interpreter's memory is its WebAssembly heap (limited inside); this bounds the thread's JS side.
    resourceLimits: { maxOldGenerationSizeMb: Math.max(32, Math.ceil(limits.memoryBytes / 2 ** 20)) },
  });
  worker.stdout.pipe(process.stderr);
  worker.stderr.pipe(process.stderr);
  const ended = new AbortController();
  const logs: string[] = [];
  let logBytes = 0;
  let calls = 0;

  return new Promise<CodeOutcome>((resolve) => {
    const finish = (end: CodeEnd): void => {
      if (ended.signal.aborted) return;
      ended.abort();
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
      void worker.terminate();
      resolve({ ...end, logs, calls });
    };
    const timer = setTimeout(() => finish({ kind: 'failed', reason: 'time', message: timeText(limits) }), limits.timeoutMs);
    const onCancel = (): void => finish({ kind: 'failed', reason: 'cancelled', message: 'the client cancelled the run' });
    if (cancel.aborted) onCancel();
    else cancel.addEventListener('abort', onCancel, { once: true });

    const answer = (message: ToWorker): void => {
      if (!ended.signal.aborted) worker.postMessage(message);
    };
    const ask = async (message: Extract<FromWorker, { type: 'ask' }>): Promise<void> => {
      calls++;
      if (calls > limits.maxCalls) {
        answer({ id: message.id, ok: false, error: `call limit reached: a run makes at most ${limits.maxCalls} calls` });
        return;
      }
      try {
        const args: unknown = JSON.parse(message.json);
        const result =
          message.kind === 'tool' ? await host.callTool(message.name, args, ended.signal) : await host.search(message.name, args);
        answer({ id: message.id, ok: true, json: JSON.stringify(result) });
      } catch (error) {
        answer({ id: message.id, ok: false, error: errorMessage(error) });
      }
    };
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'ask') void ask(message);
      else if (message.type === 'log') {
        if (logBytes > LOG_BYTES_KEPT) return;
        logBytes += message.line.length;
        logs.push(message.line);
      } else if (message.type === 'returned') finish({ kind: 'returned', json: message.json });
      else finish({ kind: 'failed', ...failureOf(message.error, limits) });
    });
    worker.on('error', (error: Error & { code?: string }) =>
      finish(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { kind: 'failed', reason: 'memory', message: memoryText(limits) }
          : { kind: 'failed', reason: 'script', message: `the interpreter failed: ${errorMessage(error)}` },
      ),
    );
    worker.on('exit', (code) => finish({ kind: 'failed', reason: 'script', message: `the interpreter stopped (exit code ${code})` }));
  });
}

// The interpreter's uncatchable errors are the limits: "interrupted" is the deadline, "out of memory" the memory limit.
function failureOf(error: ScriptError, limits: CodeLimits): { reason: CodeFailure; message: string } {
  if (error.name === 'InternalError' && error.message === 'interrupted') return { reason: 'time', message: timeText(limits) };
  if (error.name === 'InternalError' && error.message === 'out of memory') return { reason: 'memory', message: memoryText(limits) };
  return { reason: 'script', message: `${error.name}: ${error.message}` };
}

function timeText(limits: CodeLimits): string {
  return `the script ran past its time limit of ${limits.timeoutMs} ms`;
}

function memoryText(limits: CodeLimits): string {
  return `the script ran out of memory (limit ${Math.round(limits.memoryBytes / 2 ** 20)} MB)`;
}
