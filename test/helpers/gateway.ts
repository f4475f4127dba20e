// Test helpers: temp config/data dirs, fixture and third-party server paths, and a real
// `loadout serve` child process driven by the SDK Client over stdio, as Claude Code would.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import type { ClientCapabilities, ClientOptions, JSONRPCMessage } from '@modelcontextprotocol/client';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { afterEach, beforeEach } from 'vitest';
import { resolvePaths, type LoadoutPaths } from '../../src/config/index.js';
import { TOOLSET_META_TOOLS, createGateway, type Gateway } from '../../src/gateway/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { z } from 'zod';
import { tapReceived } from './notifications.js';

/** Names of the meta-tools listed by default (optimization tools are opt-in), in listing order. */
export const META_TOOL_NAMES: readonly string[] = TOOLSET_META_TOOLS.map((tool) => tool.name);

/** Repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The shipped CLI, the bundle `bin` points at (tests run after `npm run build`). */
export const CLI = path.join(ROOT, 'dist/bundle/loadout.js');

/** Path of a compiled fixture server from test/fixtures. */
export function fixture(name: string): string {
  return path.join(ROOT, 'dist/test/fixtures', `${name}.js`);
}

/** Entry points of the third-party servers installed as devDependencies. */
export const THIRD_PARTY = {
  memory: path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js'),
  filesystem: path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'),
  everything: path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'),
} as const;

/** A stdio server entry for servers.yaml running a node script. */
export function nodeServer(script: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [script], ...extra };
}

/** A fresh config dir and data dir under the OS temp dir. */
export interface TempDirs {
  root: string;
  configDir: string;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** Make temp dirs; never the real home directory. */
export async function makeTempDirs(): Promise<TempDirs> {
  const root = await mkdtemp(path.join(tmpdir(), 'loadout-test-'));
  const configDir = path.join(root, 'config');
  const dataDir = path.join(root, 'data');
  await mkdir(configDir, { recursive: true });
  await mkdir(dataDir, { recursive: true });
  return { root, configDir, dataDir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** Write servers.yaml with the given servers (and optional other top-level keys). */
export async function writeServersYaml(
  configDir: string,
  servers: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const file = path.join(configDir, 'servers.yaml');
  await writeFile(file, stringify({ servers, ...extra }));
  return file;
}

/** A running `loadout serve` with a connected SDK client. */
export interface GatewayProcess {
  client: Client;
  /** The gateway's process id. */
  pid: number;
  /** list_changed notifications received so far. */
  listChangedCount(): number;
  /** Resolves when at least `count` list_changed notifications have arrived. */
  waitForListChanged(count: number, timeoutMs?: number): Promise<void>;
  /** stderr output so far. */
  stderr(): string;
  /** Every message loadout sent the client, in order, read at the transport (see tapReceived). */
  readonly received: readonly JSONRPCMessage[];
  /** Close the client (ends the gateway's stdin) and wait for the process to exit. */
  close(): Promise<void>;
}

/** Options for startGateway. */
export interface StartOptions {
  dirs: Pick<TempDirs, 'configDir' | 'dataDir'>;
  args?: string[];
  env?: Record<string, string>;
  capabilities?: ClientCapabilities;
  /** Re-read tools/list on each list_changed, as Claude Code does (default true). */
  relistOnChange?: boolean;
  /** The client's clientInfo.name (default `loadout-test`). */
  clientName?: string;
  /** The client's clientInfo.version (default `1.0.0`). */
  clientVersion?: string;
  /** Largest message the client accepts (the SDK's default is 10 MB). */
  maxBufferSize?: number;
  /** How the client negotiates the protocol era (the SDK's default: 2025's initialize only). */
  versionNegotiation?: ClientOptions['versionNegotiation'];
}

/** Spawn `loadout serve` and connect an SDK client to it over stdio. */
export async function startGateway(options: StartOptions): Promise<GatewayProcess> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      CLI,
      'serve',
      '--config',
      options.dirs.configDir,
      '--data',
      options.dirs.dataDir,
      '--log-level',
      'info',
      ...(options.args ?? []),
    ],
    env: { ...(process.env as Record<string, string>), ...options.env },
    stderr: 'pipe',
    maxBufferSize: options.maxBufferSize,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client(
    { name: options.clientName ?? 'loadout-test', version: options.clientVersion ?? '1.0.0' },
    { capabilities: options.capabilities ?? {}, versionNegotiation: options.versionNegotiation },
  );
  const listChanged = trackListChanged(client, options.relistOnChange !== false);
  await client.connect(transport);
  const received = tapReceived(transport);
  const pid = transport.pid!;
  return {
    client,
    pid,
    listChangedCount: () => listChanged.count(),
    waitForListChanged: (count, timeoutMs) => listChanged.waitFor(count, timeoutMs),
    stderr: () => stderr,
    received,
    async close() {
      await client.close();
      await waitForExit(pid);
    },
  };
}

/** Counts a client's list_changed notifications (re-reading tools/list on each, as Claude Code does, if `relist`). */
export function trackListChanged(
  client: Client,
  relist: boolean,
): { count(): number; waitFor(count: number, timeoutMs?: number): Promise<void> } {
  let changes = 0;
  const waiters: Array<() => void> = [];
  client.setNotificationHandler('notifications/tools/list_changed', async () => {
    changes++;
    for (const wake of waiters.splice(0)) wake();
    if (relist) await client.listTools().catch(() => undefined);
  });
  return {
    count: () => changes,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (changes < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} list_changed, got ${changes}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

/** Pids of every live descendant of `pid` (Linux /proc). */
export async function descendantsOf(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const ppid = Number(fields[1]);
      const children = parents.get(ppid) ?? [];
      children.push(Number(entry));
      parents.set(ppid, children);
    } catch {
      // the process ended while we looked
    }
  }
  const result: number[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      result.push(child);
      queue.push(child);
    }
  }
  return result;
}

/** Whether a process is alive (and not a zombie). */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Poll until the process is gone (or throw after `timeoutMs`). */
export async function waitForExit(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Poll `check` until it returns true (or throw after `timeoutMs`). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The text of the first content block of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.find((block) => block.type === 'text')?.text ?? '';
}

/** A tool definition exactly as a server sent it. */
export type RawTool = Record<string, unknown> & { name: string };
const RawToolListSchema = z.looseObject({ tools: z.array(z.looseObject({ name: z.string() })), nextCursor: z.string().optional() });

/** Every tool a server lists, raw (no SDK Tool schema in between to drop fields), following nextCursor. */
export async function rawToolsOf(client: Client): Promise<RawTool[]> {
  const tools: RawTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, RawToolListSchema);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Temp dirs and gateways of one test, created before it and cleaned up after it. */
export interface GatewaySandbox {
  /** This test's config and data dirs. */
  readonly dirs: TempDirs;
  /** Start `loadout serve` on this test's dirs; closed after the test. */
  start(options?: Omit<StartOptions, 'dirs'>): Promise<GatewayProcess>;
}

// Fresh dirs for each test, and what the test started on them closed after it, before the dirs go.
function useDirsPerTest<T extends { close(): Promise<void> }>(owner: string): { dirs(): TempDirs; keep(started: T): T } {
  let dirs: TempDirs | undefined;
  const started: T[] = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    // Something a test already stopped (or killed) closes without complaint.
    await Promise.allSettled(started.splice(0).map((each) => each.close()));
    await dirs?.cleanup();
  });
  return {
    dirs() {
      if (!dirs) throw new Error(`${owner}: dirs exist only inside a test`);
      return dirs;
    },
    keep(each) {
      started.push(each);
      return each;
    },
  };
}

/** Register beforeEach/afterEach hooks giving each test fresh dirs and closing its gateways. */
export function useGatewaySandbox(): GatewaySandbox {
  const perTest = useDirsPerTest<GatewayProcess>('useGatewaySandbox');
  return {
    get dirs() {
      return perTest.dirs();
    },
    async start(options = {}) {
      return perTest.keep(await startGateway({ ...options, dirs: this.dirs }));
    },
  };
}

/** Fresh dirs per test for a gateway created in the test's own process (no child, no client). */
export interface InProcessSandbox {
  readonly dirs: TempDirs;
  readonly paths: LoadoutPaths;
  /** Create the gateway on this test's dirs; it is closed after the test, before its dirs are removed. */
  start(): Promise<Gateway>;
}

/** Register beforeEach/afterEach hooks giving each test fresh dirs and closing its in-process gateways. */
export function useInProcessGateway(): InProcessSandbox {
  const perTest = useDirsPerTest<Gateway>('useInProcessGateway');
  return {
    get dirs() {
      return perTest.dirs();
    },
    get paths() {
      return resolvePaths({ configDir: this.dirs.configDir, dataDir: this.dirs.dataDir });
    },
    async start() {
      return perTest.keep(await createGateway({ paths: this.paths, logger: silentLogger }));
    },
  };
}
