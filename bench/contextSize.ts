// Row 6: what the tool list costs the agent's context. tools/list at idle (meta-tools only, plus
// the session's instructions with their map of the servers) vs with every tool exposed (`all`), for a demo-like catalog of real servers (the echo fixture,
// server-memory, server-filesystem, discovered live) and for a generated 100-tool catalog.
import type { Client } from '@modelcontextprotocol/client';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSetup, THIRD_PARTY, type BenchSetup } from './catalogFixture.js';
import { spawnLoadout } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatBytes } from './stats.js';

const REDUCTION_TARGET = 0.9;

/** Rows 6a–6b. */
export async function benchContextSize(context: BenchContext): Promise<BenchRow[]> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'loadout-bench-files-'));
  const demo = await createSetup({
    servers: 0,
    toolsPerServer: 0,
    echoTools: context.echoTools,
    discovered: {
      memory: { command: process.execPath, args: [THIRD_PARTY.memory], env: { MEMORY_FILE_PATH: path.join(scratch, 'memory.jsonl') } },
      filesystem: { command: process.execPath, args: [THIRD_PARTY.filesystem, scratch] },
    },
  });
  const hundred = await createSetup({ servers: 5, toolsPerServer: 20 });
  try {
    return [
      await sizeRow('6a', 'demo-like catalog (echo + memory + filesystem)', demo, undefined),
      await sizeRow('6b', 'generated 100-tool catalog', hundred, REDUCTION_TARGET),
    ];
  } finally {
    await Promise.all([demo.cleanup(), hundred.cleanup(), rm(scratch, { recursive: true, force: true })]);
  }
}

async function sizeRow(id: string, catalogName: string, setup: BenchSetup, target: number | undefined): Promise<BenchRow> {
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
    const instructions = Buffer.byteLength(gateway.client.getInstructions() ?? '');
    const listed = await listing(gateway.client);
    const idle = { bytes: listed.bytes + instructions, count: listed.count };
    const equipped = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    if (equipped.isError) throw new Error(`equip all failed: ${JSON.stringify(equipped.content)}`);
    const all = await listing(gateway.client);
    const reduction = 1 - idle.bytes / all.bytes;
    const toolCount = all.count - idle.count;
    return {
      id,
      figure: `tools/list size idle vs all: ${catalogName}, ${toolCount} tools`,
      loadout: `idle ${formatBytes(idle.bytes)} ≈ ${tokens(idle.bytes)} tok (${idle.count} meta-tools + instructions ${formatBytes(instructions)})`,
      limit: `all ${formatBytes(all.bytes)} ≈ ${tokens(all.bytes)} tok`,
      ratio: idle.bytes / all.bytes,
      target: target === undefined ? `— (${percent(reduction)} smaller)` : `≥ ${percent(target)} smaller (${percent(reduction)})`,
      pass: target === undefined ? undefined : reduction >= target,
      values: {
        idleBytes: idle.bytes,
        instructionsBytes: instructions,
        allBytes: all.bytes,
        idleTokens: tokens(idle.bytes),
        allTokens: tokens(all.bytes),
        catalogTools: toolCount,
        reduction,
      },
    };
  } finally {
    await gateway.close();
  }
}

async function listing(client: Client): Promise<{ bytes: number; count: number }> {
  const result = await client.listTools();
  return { bytes: Buffer.byteLength(JSON.stringify({ tools: result.tools })), count: result.tools.length };
}

// The common rule of thumb for English and JSON: about four bytes per token.
function tokens(bytes: number): number {
  return Math.round(bytes / 4);
}

function percent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10} %`;
}
