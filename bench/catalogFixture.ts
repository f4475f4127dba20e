// Generated bench setups: a temp config dir (servers.yaml, toolsets) and data dir (catalog.json
// in the real definition-cache format), so the gateway starts warm without spawning anything.
// Tool definitions are deterministic (seeded) and shaped like real ones: a sentence or two of
// description and a few described parameters.
import type { Tool } from '@modelcontextprotocol/server';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { writeDefinitionCache, type CachedServerTools } from '../src/catalog/index.js';
import { resolvePaths, type LoadoutPaths } from '../src/config/index.js';
import { ToolsetStore } from '../src/toolsets/index.js';

const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'sync', 'export', 'import', 'archive'];
const NOUNS = ['issue', 'file', 'record', 'user', 'invoice', 'report', 'message', 'event', 'ticket', 'document', 'branch', 'metric'];
const DOMAINS = ['billing', 'tracker', 'storage', 'calendar', 'crm', 'analytics', 'mail', 'repository', 'wiki', 'monitoring'];
const PARAMS: Array<[string, 'string' | 'number' | 'boolean', string]> = [
  ['id', 'string', 'Identifier of the item, as returned by the list tool'],
  ['query', 'string', 'Free-text filter; words are matched against titles and bodies'],
  ['limit', 'number', 'Maximum number of items to return (1-100)'],
  ['cursor', 'string', 'Opaque pagination cursor from a previous response'],
  ['include_archived', 'boolean', 'Also return archived items'],
  ['owner', 'string', 'Login name of the owner'],
  ['since', 'string', 'ISO 8601 timestamp; only items changed after it'],
];

/** The repository root (works from bench/*.ts under vitest and from dist/bench/*.js). */
export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
/** The shipped CLI, the bundle `bin` points at. */
export const CLI = path.join(ROOT, 'dist/bundle/loadout.js');
/** The compiled echo fixture: a fast, trivial stdio MCP server. */
export const ECHO_FIXTURE = path.join(ROOT, 'dist/test/fixtures/echo.js');
/** The echo fixture bundled as the CLI is (scripts/bundle.mjs): the start-up floor of any SDK server. */
export const BUNDLED_ECHO_FIXTURE = path.join(ROOT, 'dist/bench/bundled/echo.js');
/** The bench's echo server for the 2026-07-28 era (bench/modernEcho.ts): serveStdio, both eras. */
export const MODERN_ECHO = path.join(ROOT, 'dist/bench/modernEcho.js');
/** That server bundled as the CLI is: the start-up floor of an SDK server answering a modern client. */
export const BUNDLED_MODERN_ECHO = path.join(ROOT, 'dist/bench/bundled/modern-echo.js');
/** The compiled interactive fixture; `http` as its argument serves streamable HTTP on a free port. */
export const INTERACTIVE_FIXTURE = path.join(ROOT, 'dist/test/fixtures/interactive.js');
/** The compiled zero-logic relay: the physical floor of adding one process hop. */
export const RELAY = path.join(ROOT, 'dist/bench/relay.js');
/** The compiled JSON-lines relay: the floor of a hop that parses and re-writes every message. */
export const JSON_RELAY = path.join(ROOT, 'dist/bench/jsonRelay.js');
/** Third-party servers of the demo-like catalog. */
export const THIRD_PARTY = {
  memory: path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js'),
  filesystem: path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'),
} as const;

function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

/** A small seeded PRNG (mulberry32), so every run benchmarks the same catalog. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` distinct, realistic tool definitions for one generated server. */
export function generateTools(serverIndex: number, count: number): Tool[] {
  const random = seededRandom(serverIndex + 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const domain = DOMAINS[serverIndex % DOMAINS.length]!;
  const tools: Tool[] = [];
  for (let index = 0; index < count; index++) {
    const verb = VERBS[index % VERBS.length]!;
    // Servers start at different nouns, so every noun occurs across the catalog.
    const noun = NOUNS[(Math.floor(index / VERBS.length) + serverIndex) % NOUNS.length]!;
    const round = Math.floor(index / (VERBS.length * NOUNS.length));
    const name = `${verb}_${noun}${round ? `_v${round + 1}` : ''}`;
    const params = [...PARAMS].sort(() => random() - 0.5).slice(0, 2 + Math.floor(random() * 3));
    tools.push({
      name,
      description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${noun}s in the ${domain} service. Results are ${pick(['paginated', 'sorted by date', 'cached for a minute', 'scoped to your account'])}.`,
      inputSchema: {
        type: 'object',
        properties: Object.fromEntries(params.map(([param, type, description]) => [param, { type, description }])),
        required: [params[0]![0]],
      },
      ...(verb === 'get' || verb === 'list' || verb === 'search' ? { annotations: { readOnlyHint: true } } : {}),
    });
  }
  return tools;
}

/** Name of the generated server at `index` (sorted like its index). */
export function generatedServerName(index: number): string {
  return `s${String(index).padStart(3, '0')}`;
}

/** What a bench setup holds. */
export interface BenchSetup {
  paths: LoadoutPaths;
  /** `server.tool` ids of every generated tool, in catalog order. */
  toolIds: string[];
  /** CLI arguments selecting this setup's dirs. */
  args: string[];
  cleanup(): Promise<void>;
}

/** Options of a generated setup. */
export interface SetupOptions {
  /** Generated (never started) lazy servers. */
  servers: number;
  toolsPerServer: number;
  /** Cached definitions of the real echo fixture, served as `echo` (omit for no echo server). */
  echoTools?: Tool[];
  /** Extra servers started as `node <args>`, with their tools cached: name → args and tools (and a `sandbox:` entry). */
  cached?: Record<string, { args: string[]; tools: Tool[]; sandbox?: unknown }>;
  /** Extra servers.yaml entries whose tools are not cached (discovered on start). */
  discovered?: Record<string, unknown>;
  /** Saved toolsets to write, name → tool ids. */
  toolsets?: Record<string, string[]>;
}

/** Write servers.yaml, catalog.json and toolsets into fresh temp dirs. */
export async function createSetup(options: SetupOptions): Promise<BenchSetup> {
  const root = await mkdtemp(path.join(tmpdir(), 'loadout-bench-'));
  const paths = resolvePaths({ configDir: path.join(root, 'config'), dataDir: path.join(root, 'data') });
  await mkdir(paths.configDir, { recursive: true });
  await mkdir(paths.dataDir, { recursive: true });
  const echoServer = () => ({ command: process.execPath, args: [ECHO_FIXTURE] });
  const servers: Record<string, unknown> = { ...(options.echoTools ? { echo: echoServer() } : {}), ...options.discovered };
  const cache: Record<string, CachedServerTools> = options.echoTools
    ? { echo: { discoveredAt: new Date().toISOString(), tools: options.echoTools } }
    : {};
  for (const [name, { args, tools, sandbox }] of Object.entries(options.cached ?? {})) {
    servers[name] = { command: process.execPath, args, ...(sandbox === undefined ? {} : { sandbox }) };
    cache[name] = { discoveredAt: new Date().toISOString(), tools };
  }
  const toolIds: string[] = [];
  for (let index = 0; index < options.servers; index++) {
    const server = generatedServerName(index);
    // Never started by the bench, but a real command, so a stray start would still work.
    servers[server] = echoServer();
    const tools = generateTools(index, options.toolsPerServer);
    cache[server] = { discoveredAt: new Date().toISOString(), tools };
    for (const tool of tools) toolIds.push(`${server}.${tool.name}`);
  }
  await writeFile(paths.serversFile, stringify({ servers }));
  if (Object.keys(cache).length) await writeDefinitionCache(paths.catalogCacheFile, cache);
  const toolsets = new ToolsetStore(paths.toolsetsDir);
  for (const [name, tools] of Object.entries(options.toolsets ?? {})) await toolsets.save({ name, tools });
  return {
    paths,
    toolIds,
    args: ['--config', paths.configDir, '--data', paths.dataDir],
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
