// `loadout serve` driven over raw pipes, with no SDK in between: what a client sends goes on
// stdin byte for byte (malformed messages, pipelined requests), and every stdout line is kept as
// written.
import { spawn } from 'node:child_process';
import { CLI, waitForExit, type TempDirs } from './gateway.js';

/** One stdout line of the gateway, parsed. */
export type RawMessage = {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** A raw stdio session with a running gateway. */
export interface RawGateway {
  /** Write `messages` as one line each, exactly as given, in one write (as a client pipelining them does). */
  send(...messages: unknown[]): void;
  /** The answer (result or error) to request `id`, waiting for it up to `timeoutMs`. */
  answer(id: string | number | null, timeoutMs?: number): Promise<RawMessage>;
  /** The stdout line of the answer to request `id` as it was written, waiting for it up to `timeoutMs`. */
  answerLine(id: string | number | null, timeoutMs?: number): Promise<string>;
  /** Every message read so far. */
  messages(): RawMessage[];
  /** stderr output so far. */
  stderr(): string;
  /** The gateway's process id. */
  readonly pid: number;
  /** Settles with the exit code when the process has exited (null: ended by a signal). */
  readonly exited: Promise<number | null>;
  /** End stdin and wait for the gateway to exit. */
  close(): Promise<void>;
}

/** Options of spawnRawGateway. */
export interface RawGatewayOptions {
  /** Arguments of `loadout serve` after --config, --data and --log-level. */
  args?: string[];
  /** Arguments of node itself, before the CLI (a `--import` preload). */
  nodeArgs?: string[];
}

/** Spawn `loadout serve` on `dirs` over raw pipes, with nothing sent yet. */
export function spawnRawGateway(dirs: Pick<TempDirs, 'configDir' | 'dataDir'>, options: RawGatewayOptions = {}): RawGateway {
  const serve = ['serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--log-level', 'info', ...(options.args ?? [])];
  return spawnRaw([...(options.nodeArgs ?? []), CLI, ...serve]);
}

/** Spawn `loadout serve` on `dirs` and complete the handshake over raw pipes. */
export async function startRawGateway(dirs: Pick<TempDirs, 'configDir' | 'dataDir'>, args: string[] = []): Promise<RawGateway> {
  return initialize(spawnRawGateway(dirs, { args }));
}

/** Spawn `node ARGS` (loadout, or a server directly) and complete the handshake over raw pipes. */
export async function startRawSession(args: string[]): Promise<RawGateway> {
  return initialize(spawnRaw(args));
}

function spawnRaw(args: string[]): RawGateway {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines: string[] = [];
  const received: RawMessage[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    for (const line of parts.filter((part) => part.trim())) {
      lines.push(line);
      received.push(JSON.parse(line) as RawMessage);
    }
    for (const wake of [...waiters]) wake();
  });
  const answerLine = (id: string | number | null, timeoutMs = 15_000): Promise<string> => {
    const find = (): string | undefined =>
      lines.find((_, index) => {
        const message = received[index]!;
        return message.id === id && message.method === undefined && (message.result !== undefined || message.error !== undefined);
      });
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = find();
        if (found === undefined) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no answer to request ${JSON.stringify(id)} within ${timeoutMs} ms; stderr:\n${stderr}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  };
  return {
    pid: child.pid!,
    exited,
    send: (...messages) =>
      void child.stdin.write(messages.map((message) => `${typeof message === 'string' ? message : JSON.stringify(message)}\n`).join('')),
    messages: () => [...received],
    stderr: () => stderr,
    answerLine,
    answer: async (id, timeoutMs) => JSON.parse(await answerLine(id, timeoutMs)) as RawMessage,
    async close() {
      child.stdin.end();
      await waitForExit(child.pid!);
    },
  };
}

// The 2025 handshake.
async function initialize(gateway: RawGateway): Promise<RawGateway> {
  gateway.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await gateway.answer('init');
  gateway.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return gateway;
}
