// The transport to a stdio downstream server: spawns it and speaks newline-delimited JSON-RPC
// over its stdin and stdout, and ends it as the SDK's StdioClientTransport does (stdin end, then
// SIGTERM, then SIGKILL). It replaces that class, whose per-message zod parse cost time on every call.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import spawn from 'cross-spawn';
import { ProtocolErrorCode, type Transport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { splitEntryText } from '../config/index.js';
import { JsonLineReader, JsonLineWriter, MAX_JSON_DEPTH, methodOfLine, requestIdOfLine, type RefusedLine } from '../shared/index.js';
import { StderrTail, type MaskedValue } from './stderrTail.js';

// The SDK's waits: after stdin ends, a server gets this long to exit before SIGTERM, and as long again before SIGKILL.
const EXIT_WAIT_MS = 2000;
// The waits once loadout is shutting down (`hurry` aborted): the whole gateway must be gone within 2 s.
const HURRIED_EXIT_WAIT_MS = 300;
// A child gets its own process group (POSIX), so the helpers it spawns (npx → node, a shell's
// children) are signalled with it and none is orphaned.
const OWN_PROCESS_GROUP = process.platform !== 'win32';

/** What to spawn, and how much it may send in one message. */
export interface ChildProcessOptions {
  command: string;
  args: string[];
  /** The child's whole environment (nothing is added to it). */
  env: Record<string, string>;
  cwd?: string;
  maxMessageBytes: number;
  /** Aborted when loadout shuts down: closing then waits only briefly before each signal. */
  hurry?: AbortSignal;
  /** Values hidden in the kept stderr lines (those of the server's `${VAR}` references). */
  masked?: readonly MaskedValue[];
  /** Called once the child is gone (or never ran): what its start set up for it goes (a sandbox's temp dir). */
  release?: () => void;
  /** A sandboxed child's refusals, named from its stderr lines (and its sandbox's own record), shown after them. */
  refusals?: (stderrLines: readonly string[]) => string[];
}

/** An MCP client transport to a child process it spawns; its stderr is piped to `stderr`. */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** The child's stderr, readable before start() so no early output is lost. */
  readonly stderr = new PassThrough();
  #options: ChildProcessOptions;
  readonly #reader: JsonLineReader;
  readonly #tail: StderrTail;
  /** How the child ended, once it has. */
  #exit: string | undefined;
  #child: ChildProcess | undefined;
  #writer: JsonLineWriter | undefined;
  #started = false;
  #closing: Promise<void> | undefined;
  #closeNotified = false;

  constructor(options: ChildProcessOptions) {
    this.#options = options;
    this.#tail = new StderrTail(options.masked ?? []);
    this.#reader = new JsonLineReader(options.maxMessageBytes, {
      onMessage: (message) => this.onmessage?.(message),
      onError: (error) => this.onerror?.(error),
      onTooDeep: (line) => this.#refuseTooDeep(line),
    });
  }

  // An answer nested too deep fails the request it answers, at once, instead of leaving it to its
  // timeout; a request or notification of the server's own is only reported.
  #refuseTooDeep(line: RefusedLine): void {
    const message = `The server sent a message of ${line.bytes} bytes nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH); it was discarded`;
    this.onerror?.(new Error(message));
    const id = requestIdOfLine(line);
    if (id === null || id === undefined || methodOfLine(line) !== undefined) return;
    this.onmessage?.({ jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.ParseError, message } });
  }

  /** The child's process id, once spawned. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** How the child ended ("exited with code 1"), or undefined while it runs. */
  get exit(): string | undefined {
    return this.#exit;
  }

  /** The child's last stderr lines (bounded, `${VAR}` values masked), to say why it failed. */
  stderrLines(): string[] {
    const lines = this.#tail.lines();
    return this.#options.refusals ? [...lines, ...this.#options.refusals(lines)] : lines;
  }

  /** Spawns the child; rejects in plain words if it cannot be spawned (no such program, not executable). */
  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error('ChildProcessTransport already started (Client.connect starts it)'));
    this.#started = true;
    const { command, args, env, cwd } = this.#options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: process.platform === 'win32',
        detached: OWN_PROCESS_GROUP,
      });
      this.#child = child;
      this.#writer = new JsonLineWriter(child.stdin!);
      child.once('spawn', () => resolve());
      // Before 'spawn' an error means the child never ran; rejecting an already settled promise is a no-op.
      child.on('error', (error) => {
        if (child.pid === undefined) this.#release();
        const explained = explainSpawnError(error, command, args, cwd);
        reject(explained);
        this.onerror?.(explained);
      });
      child.once('exit', (code, signal) => {
        this.#exit = signal ? `was ended by ${signal}` : `exited with code ${code}`;
      });
      // 'close' (not 'exit') so the last lines the child wrote are read before the connection ends.
      child.once('close', () => {
        if (this.#child === child) this.#child = undefined;
        this.#release();
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
      child.stderr!.on('data', (chunk: Buffer) => this.#tail.push(chunk));
      child.stderr!.pipe(this.stderr);
    });
  }

  /** Writes one message to the child's stdin as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#child || !this.#writer) return Promise.reject(new Error('Not connected: the server process is not running'));
    return this.#writer.write(message);
  }

  /**
   * Ends the child and its process group: stdin end, then SIGTERM after 2 s, then SIGKILL after
   * 2 s more (300 ms each once `hurry` is aborted). Runs once.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const child = this.#child;
      this.#child = undefined;
      if (child) await endChild(child, this.#options.hurry);
      // Gone now ('close' may come later, once its pipes drain): what it held goes before close() settles.
      this.#release();
      this.#reader.clear();
      this.#notifyClose();
    })();
    return this.#closing;
  }

  #release(): void {
    const release = this.#options.release;
    this.#options = { ...this.#options, release: undefined };
    release?.();
  }

  // Once, whether the child went first or close() did: a Client's onclose runs its cleanup.
  #notifyClose(): void {
    if (this.#closeNotified) return;
    this.#closeNotified = true;
    this.onclose?.();
  }
}

// A spawn error in plain words: which program is missing or cannot be run, and what to do. A
// common mistake, `command: "npx -y pkg"` (spawn looks for a program named "npx -y pkg"), is
// answered with the entry as it should be written.
function explainSpawnError(error: Error, command: string, args: readonly string[], cwd: string | undefined): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const words = command.trim().split(/\s+/);
  const name = JSON.stringify(command);
  if (code === 'ENOENT' && cwd !== undefined && !existsSync(cwd))
    return new SpawnFailure(`its working directory ${JSON.stringify(cwd)} (cwd: in servers.yaml) does not exist`, undefined, error);
  if (code === 'ENOENT' && words.length > 1) {
    const entry = splitEntryText(command, args);
    const fix = '`command` is the program alone and `args` the list of its arguments; write the entry as:';
    return new SpawnFailure(`no program named ${name} (spawn ENOENT)`, { text: fix, entry }, error);
  }
  if (code === 'ENOENT' && command.includes(path.sep))
    return new SpawnFailure(`no program at ${name}: the file does not exist`, undefined, error);
  if (code === 'ENOENT')
    return new SpawnFailure(`no program named ${name} on PATH`, { text: 'install it, or give its full path as `command`' }, error);
  if (code === 'EACCES') {
    const fix = 'make it executable (chmod +x) or check that it is a program, not a directory';
    return new SpawnFailure(`${name} cannot be run: permission denied`, { text: fix }, error);
  }
  return error;
}

/**
 * A server's program that could not be started, in plain words: what is wrong and, when loadout
 * knows it, the fix (with the entry as it should be written), kept apart so `doctor` shows it as
 * the fix. Its message is the problem, then the fix, then the entry on lines of their own.
 */
export class SpawnFailure extends Error {
  override readonly name = 'SpawnFailure';

  constructor(
    readonly problem: string,
    readonly fix: { text: string; entry?: string } | undefined,
    cause: Error,
  ) {
    super(fix ? `${problem}: ${fix.text}${fix.entry === undefined ? '' : `\n${fix.entry}`}` : problem, { cause });
  }
}

async function endChild(child: ChildProcess, hurry: AbortSignal | undefined): Promise<void> {
  const wait = (): Promise<void> => exitWithin(child, hurry?.aborted ? HURRIED_EXIT_WAIT_MS : EXIT_WAIT_MS, hurry);
  try {
    child.stdin?.end();
  } catch {
    // A stdin that is already gone cannot be ended; the signals below still apply.
  }
  await wait();
  if (isRunning(child)) {
    signal(child, 'SIGTERM');
    await wait();
  }
  if (isRunning(child)) {
    signal(child, 'SIGKILL');
    // Unlike the SDK, wait for it: when close() settles, the child is gone.
    await exitWithin(child, EXIT_WAIT_MS);
  }
  // Helpers the child started may outlive it; they are its group's, and go with it.
  signal(child, hurry?.aborted ? 'SIGKILL' : 'SIGTERM');
}

// Signals the child's whole process group where it has one, else the child.
function signal(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    if (OWN_PROCESS_GROUP && child.pid !== undefined) process.kill(-child.pid, name);
    else child.kill(name);
  } catch {
    // ESRCH: the group is gone already.
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

// Waits for the child's exit, but no longer than `ms`, and no longer once `hurry` aborts. Exit,
// not close: a grandchild holding the stdout pipe open must not delay the signals meant for the child.
function exitWithin(child: ChildProcess, ms: number, hurry?: AbortSignal): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const wasHurried = hurry?.aborted === true;
    const done = (): void => {
      clearTimeout(timer);
      child.off('exit', done);
      hurry?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    child.once('exit', done);
    // A slow wait begun before shutdown ends when shutdown starts; the next step then hurries.
    if (!wasHurried) hurry?.addEventListener('abort', done, { once: true });
  });
}
