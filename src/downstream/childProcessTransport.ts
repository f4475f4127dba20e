// The transport to a stdio downstream server: spawns it and speaks newline-delimited JSON-RPC
// over its stdin and stdout, and ends it as the SDK's StdioClientTransport does (stdin end, then
// SIGTERM, then SIGKILL). It replaces that class, whose per-message zod parse cost time on every call.
import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import spawn from 'cross-spawn';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLineReader, JsonLineWriter } from '../shared/index.js';

// The SDK's waits: after stdin ends, a server gets this long to exit before SIGTERM, and as long again before SIGKILL.
const EXIT_WAIT_MS = 2000;

/** What to spawn, and how much it may send in one message. */
export interface ChildProcessOptions {
  command: string;
  args: string[];
  /** The child's whole environment (nothing is added to it). */
  env: Record<string, string>;
  cwd?: string;
  maxMessageBytes: number;
}

/** An MCP client transport to a child process it spawns; its stderr is piped to `stderr`. */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** The child's stderr, readable before start() so no early output is lost. */
  readonly stderr = new PassThrough();
  readonly #options: ChildProcessOptions;
  readonly #reader: JsonLineReader;
  #child: ChildProcess | undefined;
  #writer: JsonLineWriter | undefined;
  #started = false;
  #closing: Promise<void> | undefined;
  #closeNotified = false;

  constructor(options: ChildProcessOptions) {
    this.#options = options;
    this.#reader = new JsonLineReader(options.maxMessageBytes, {
      onMessage: (message) => this.onmessage?.(message),
      onError: (error) => this.onerror?.(error),
    });
  }

  /** The child's process id, once spawned. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Spawns the child; rejects if it cannot be spawned (e.g. `spawn foo ENOENT`). */
  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error('ChildProcessTransport already started (Client.connect starts it)'));
    this.#started = true;
    const { command, args, env, cwd } = this.#options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'], shell: false, windowsHide: process.platform === 'win32' });
      this.#child = child;
      this.#writer = new JsonLineWriter(child.stdin!);
      child.once('spawn', () => resolve());
      // Before 'spawn' an error means the child never ran; rejecting an already settled promise is a no-op.
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      // 'close' (not 'exit') so the last lines the child wrote are read before the connection ends.
      child.once('close', () => {
        if (this.#child === child) this.#child = undefined;
        this.#notifyClose();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => {
        try {
          this.#reader.push(chunk);
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
        }
      });
      child.stderr!.pipe(this.stderr);
    });
  }

  /** Writes one message to the child's stdin as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#child || !this.#writer) return Promise.reject(new Error('Not connected: the server process is not running'));
    return this.#writer.write(message);
  }

  /** Ends the child: stdin end, then SIGTERM after 2 s, then SIGKILL after 2 s more. Runs once. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const child = this.#child;
      this.#child = undefined;
      if (child) await endChild(child);
      this.#reader.clear();
      this.#notifyClose();
    })();
    return this.#closing;
  }

  // Once, whether the child went first or close() did: a Client's onclose runs its cleanup.
  #notifyClose(): void {
    if (this.#closeNotified) return;
    this.#closeNotified = true;
    this.onclose?.();
  }
}

async function endChild(child: ChildProcess): Promise<void> {
  try {
    child.stdin?.end();
  } catch {
    // A stdin that is already gone cannot be ended; the signals below still apply.
  }
  await exitWithin(child, EXIT_WAIT_MS);
  if (isRunning(child)) {
    child.kill('SIGTERM');
    await exitWithin(child, EXIT_WAIT_MS);
  }
  if (isRunning(child)) {
    child.kill('SIGKILL');
    // Unlike the SDK, wait for it: when close() settles, the child is gone.
    await exitWithin(child, EXIT_WAIT_MS);
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

// Waits for the child's exit, but no longer than `ms`. Exit, not close: a grandchild holding the
// stdout pipe open must not delay the signals meant for the child.
function exitWithin(child: ChildProcess, ms: number): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off('exit', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    child.once('exit', done);
  });
}
