// `loadout serve` driven over raw pipes, with no SDK in between: what a client sends goes on
// stdin byte for byte (malformed messages, pipelined requests), and every stdout line is kept.
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
  /** Write `message` as one line, exactly as given. */
  send(message: unknown): void;
  /** The answer (result or error) to request `id`, waiting for it up to `timeoutMs`. */
  answer(id: string | number | null, timeoutMs?: number): Promise<RawMessage>;
  /** Every message read so far. */
  messages(): RawMessage[];
  /** End stdin and wait for the gateway to exit. */
  close(): Promise<void>;
}

/** Spawn `loadout serve` on `dirs` and complete the handshake over raw pipes. */
export function startRawGateway(dirs: Pick<TempDirs, 'configDir' | 'dataDir'>, args: string[] = []): Promise<RawGateway> {
  return startRawSession([CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--log-level', 'info', ...args]);
}

/** Spawn `node ARGS` (loadout, or a server directly) and complete the handshake over raw pipes. */
export async function startRawSession(args: string[]): Promise<RawGateway> {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const received: RawMessage[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line.trim()) received.push(JSON.parse(line) as RawMessage);
    for (const wake of [...waiters]) wake();
  });
  const gateway: RawGateway = {
    send: (message) => void child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    messages: () => [...received],
    answer(id, timeoutMs = 15_000) {
      const find = (): RawMessage | undefined =>
        received.find((m) => m.id === id && m.method === undefined && (m.result !== undefined || m.error !== undefined));
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = find();
          if (!found) return;
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
    },
    async close() {
      child.stdin.end();
      await waitForExit(child.pid!);
    },
  };
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
