// The bench's view of processes: an MCP server (loadout or a fixture) spawned over stdio with an
// SDK Client connected in either era of MCP, and Linux /proc readings of it (child processes,
// resident memory).
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { readdir, readFile } from 'node:fs/promises';
import { CLI } from './catalogFixture.js';

/** A spawned stdio MCP server with a connected client. */
export interface McpProcess {
  client: Client;
  pid: number;
  /** Called on each tools/list_changed, before the client re-lists (if it does). */
  onListChanged(listener: () => void): void;
  /** stderr so far (for diagnostics when something fails). */
  stderr(): string;
  close(): Promise<void>;
}

/**
 * The era the bench's client speaks: 'legacy' is the 2025 initialize handshake (the SDK's
 * default); 'modern' negotiates (`versionNegotiation: auto`) and must end up in 2026-07-28.
 */
export type ClientEra = 'legacy' | 'modern';

/**
 * The SDK's stdio transport, subclassed only so that `auto` negotiation probes on the connection
 * itself, as Claude Code does: the base class runs the probe on a sibling process spawned for it,
 * which would put a second start into every start-up figure.
 */
class InPlaceProbeStdioTransport extends StdioClientTransport {}

/** Spawn options. */
export interface SpawnOptions {
  /** The client's era (default 'legacy'). */
  era?: ClientEra;
  env?: Record<string, string>;
  /** Re-read tools/list on list_changed, as Claude Code does; `onRelisted` hears when it is answered. */
  relist?: { onRelisted: (tools: unknown[]) => void };
  /** Extra node flags for a spawned loadout (spawnLoadout only). */
  nodeFlags?: string[];
}

/** Spawn `command args` and complete the MCP handshake over its stdio. */
export async function spawnMcp(command: string, args: string[], options: SpawnOptions = {}): Promise<McpProcess> {
  const era = options.era ?? 'legacy';
  const transport = new (era === 'modern' ? InPlaceProbeStdioTransport : StdioClientTransport)({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });
  const client = new Client(
    { name: 'loadout-bench', version: '1.0.0' },
    { capabilities: {}, ...(era === 'modern' && { versionNegotiation: { mode: 'auto' as const } }) },
  );
  const listeners: Array<() => void> = [];
  client.setNotificationHandler('notifications/tools/list_changed', async () => {
    for (const listener of listeners) listener();
    if (options.relist) options.relist.onRelisted((await client.listTools()).tools);
  });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`${args.join(' ')} did not start: ${error instanceof Error ? error.message : String(error)}\n${stderr}`);
  }
  // A row labelled 2026-07-28 must not measure a client that fell back to initialize.
  if (era === 'modern' && client.getProtocolEra() !== 'modern') {
    await client.close();
    throw new Error(`${args.join(' ')} answered server/discover in no modern era (negotiated ${client.getProtocolEra()})`);
  }
  return {
    client,
    pid: transport.pid!,
    onListChanged: (listener) => void listeners.push(listener),
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/**
 * Spawn `loadout <globalArgs> serve <serveArgs>` (global: --config/--data; serve: --equip).
 * With LOADOUT_BENCH_CPU_PROF=<dir>, each gateway writes a V8 CPU profile there on exit
 * (node refuses --cpu-prof in NODE_OPTIONS, so the bench passes it itself).
 */
export function spawnLoadout(globalArgs: string[], serveArgs: string[] = [], options: SpawnOptions = {}): Promise<McpProcess> {
  return spawnMcp(process.execPath, [...(options.nodeFlags ?? []), ...loadoutCommandArgs(globalArgs, serveArgs)], options);
}

/** node's arguments for `loadout <globalArgs> serve <serveArgs>`, with the CPU-profile flags if asked for. */
export function loadoutCommandArgs(globalArgs: string[], serveArgs: string[]): string[] {
  const profileDir = process.env.LOADOUT_BENCH_CPU_PROF;
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  return [...nodeFlags, CLI, ...globalArgs, 'serve', ...serveArgs];
}

/** Live descendants of `pid` (Linux /proc; zombies excluded). */
export async function descendantsOf(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (!stat || fields[0] === 'Z') continue;
    const parent = Number(fields[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length;) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Resident set size of a process in bytes (VmRSS from /proc/<pid>/status). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kib) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

/** Peak resident set size of a process so far in bytes (VmHWM from /proc/<pid>/status). */
export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kib) throw new Error(`no VmHWM for process ${pid}`);
  return Number(kib) * 1024;
}

/** CPU time (user + system) a process has used so far, in milliseconds (Linux clock ticks of 10 ms). */
export async function cpuTimeMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name start at field 3 (state); utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
