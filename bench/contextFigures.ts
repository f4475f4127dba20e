// The context-size figures the README quotes: what an agent's context holds at the start of a
// session with a catalog's servers connected directly (each server's tools/list and instructions),
// and through loadout with nothing equipped (the meta-tools and the session's instructions).
// `npm run bench` (row 6) measures them and writes bench/context-size.json and the README's table
// from them; test/unit/readmeFigures.test.ts measures them again, so neither can drift.
import type { Client } from '@modelcontextprotocol/client';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { ECHO_FIXTURE, ROOT, THIRD_PARTY, createSetup, generateTools, generatedServerName, type BenchSetup } from './catalogFixture.js';
import { spawnLoadout, spawnMcp } from './processes.js';
import { formatBytes } from './stats.js';

/** What one catalog costs the agent's context, in bytes of JSON and text. */
export const ContextFiguresSchema = z.strictObject({
  catalog: z.string(),
  tools: z.number().int(),
  /** Every server connected directly: each one's tools/list and instructions. */
  directBytes: z.number().int(),
  /** Through loadout, nothing equipped: metaToolsBytes + instructionsBytes. */
  idleBytes: z.number().int(),
  metaToolsBytes: z.number().int(),
  instructionsBytes: z.number().int(),
  /** Through loadout with every tool equipped (`equip-toolset all`), meta-tools included. */
  allBytes: z.number().int(),
});
export type ContextFigures = z.infer<typeof ContextFiguresSchema>;

/** bench/context-size.json: the figures of the last `npm run bench` context-size run. */
export const ContextSizeFileSchema = z.strictObject({ demo: ContextFiguresSchema, hundred: ContextFiguresSchema });
export type ContextSizeFile = z.infer<typeof ContextSizeFileSchema>;

export const CONTEXT_SIZE_FILE = path.join(ROOT, 'bench/context-size.json');
const README = path.join(ROOT, 'README.md');
const TABLE_START = '<!-- context-size: written by `npm run bench -- --only=context-size` from bench/context-size.json -->';
const TABLE_END = '<!-- /context-size -->';

/** A server of a catalog as it is connected to directly: its command line, or the definitions a stand-in would send. */
type DirectServer = { command: string; args: string[]; env?: Record<string, string> } | { tools: unknown[] };

/** The two catalogs the README compares: three real servers, and a generated 100 tools. */
export async function measureContextFigures(): Promise<ContextSizeFile> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'loadout-bench-files-'));
  const real = {
    memory: { command: process.execPath, args: [THIRD_PARTY.memory], env: { MEMORY_FILE_PATH: path.join(scratch, 'memory.jsonl') } },
    filesystem: { command: process.execPath, args: [THIRD_PARTY.filesystem, scratch] },
  };
  const echo = await spawnMcp(process.execPath, [ECHO_FIXTURE]);
  const echoTools = await echo.client.listTools().finally(() => echo.close());
  const demo = await createSetup({ servers: 0, toolsPerServer: 0, echoTools: echoTools.tools, discovered: real });
  const hundred = await createSetup({ servers: 5, toolsPerServer: 20 });
  try {
    const generated = Object.fromEntries(
      Array.from({ length: 5 }, (_, index) => [generatedServerName(index), { tools: generateTools(index, 20) }] as const),
    );
    return {
      demo: await measure('three real servers (an echo server, server-memory, server-filesystem)', demo, {
        echo: { command: process.execPath, args: [ECHO_FIXTURE] },
        ...real,
      }),
      hundred: await measure('a catalog of 100 tools (5 generated servers)', hundred, generated),
    };
  } finally {
    await Promise.all([demo.cleanup(), hundred.cleanup(), rm(scratch, { recursive: true, force: true })]);
  }
}

async function measure(catalog: string, setup: BenchSetup, servers: Record<string, DirectServer>): Promise<ContextFigures> {
  let directBytes = 0;
  for (const server of Object.values(servers)) directBytes += await directBytesOf(server);
  // A first start discovers every server; the session of the next start, measured here, gets the
  // map of them in its instructions, as an agent's session does once the catalog is known.
  const discovering = await spawnLoadout(setup.args);
  try {
    const discovered = await discovering.client.callTool({ name: 'discover-all-tools', arguments: { limit: 1 } });
    if (discovered.isError) throw new Error(`discovery failed: ${JSON.stringify(discovered.content)}`);
  } finally {
    await discovering.close();
  }
  const gateway = await spawnLoadout(setup.args);
  try {
    const instructionsBytes = Buffer.byteLength(gateway.client.getInstructions() ?? '');
    const idle = await listing(gateway.client);
    const equipped = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    if (equipped.isError) throw new Error(`equip all failed: ${JSON.stringify(equipped.content)}`);
    const all = await listing(gateway.client);
    return {
      catalog,
      tools: all.count - idle.count,
      directBytes,
      idleBytes: idle.bytes + instructionsBytes,
      metaToolsBytes: idle.bytes,
      instructionsBytes,
      allBytes: all.bytes,
    };
  } finally {
    await gateway.close();
  }
}

// What a client connected to the server itself gets: its tools/list and its instructions.
async function directBytesOf(server: DirectServer): Promise<number> {
  if ('tools' in server) return Buffer.byteLength(JSON.stringify({ tools: server.tools }));
  const connected = await spawnMcp(server.command, server.args, server.env ? { env: server.env } : {});
  try {
    return (await listing(connected.client)).bytes + Buffer.byteLength(connected.client.getInstructions() ?? '');
  } finally {
    await connected.close();
  }
}

async function listing(client: Client): Promise<{ bytes: number; count: number }> {
  const result = await client.listTools();
  return { bytes: Buffer.byteLength(JSON.stringify({ tools: result.tools })), count: result.tools.length };
}

// The common rule of thumb for English and JSON: about four bytes per token.
export function tokens(bytes: number): number {
  return Math.round(bytes / 4);
}

/** The README's table of the figures, between its markers. */
export function contextSizeTable({ demo, hundred }: ContextSizeFile): string {
  const size = (bytes: number) => `${formatBytes(bytes)} ≈ ${tokens(bytes).toLocaleString('en-US')} tokens`;
  const row = (figures: ContextFigures) =>
    `| ${figures.catalog}, ${figures.tools} tools | ${size(figures.directBytes)} | ${size(figures.idleBytes)} (${Math.round((1 - figures.idleBytes / figures.directBytes) * 100)} % less) |`;
  return [
    TABLE_START,
    '| catalog | connected directly | through loadout, nothing equipped |',
    '|---|---|---|',
    row(demo),
    row(hundred),
    '',
    `Through loadout, the agent gets the meta-tools (${formatBytes(demo.metaToolsBytes)}) and the session's instructions, which name`,
    `each server in one line (${formatBytes(demo.instructionsBytes)} for the three servers); directly, each server's tools and instructions.`,
    TABLE_END,
  ].join('\n');
}

/** The README's figures block as it is now (between the markers), or undefined without them. */
export function readmeContextSizeTable(readme: string): string | undefined {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  return start < 0 || end < start ? undefined : readme.slice(start, end + TABLE_END.length);
}

/** Keep `figures` in bench/context-size.json and the README's table. */
export async function writeContextFigures(figures: ContextSizeFile): Promise<void> {
  await writeFile(CONTEXT_SIZE_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  const readme = await readFile(README, 'utf8');
  const current = readmeContextSizeTable(readme);
  if (current === undefined) throw new Error(`README.md has no ${TABLE_START} block to write the figures into`);
  await writeFile(README, readme.replace(current, contextSizeTable(figures)));
}

/** bench/context-size.json as committed. */
export async function readContextFigures(): Promise<ContextSizeFile> {
  return ContextSizeFileSchema.parse(JSON.parse(await readFile(CONTEXT_SIZE_FILE, 'utf8')));
}
