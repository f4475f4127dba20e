// Keeps `npm run bench` from rotting: its pure helpers, its generated setups (read back through
// loadout's own loaders), and a --quick run of the sections whose checks are behaviour (no child
// process at warm start, one list_changed per equip). No figure is asserted: timing is not tested.
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { runBench } from '../../bench/bench.js';
import { createSetup, generateTools, type BenchSetup } from '../../bench/catalogFixture.js';
import { liveBytesOf } from '../../bench/heapSnapshot.js';
import { descendantsOf } from '../../bench/processes.js';
import { percentile, ratio, summarize } from '../../bench/stats.js';
import { readDefinitionCache } from '../../src/catalog/index.js';
import { loadServersFile } from '../../src/config/index.js';
import { ToolsetStore } from '../../src/toolsets/index.js';

describe('bench statistics', () => {
  it('takes nearest-rank percentiles regardless of input order', () => {
    const samples = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(samples, 50)).toBe(5);
    expect(percentile(samples, 99)).toBe(10);
    expect(percentile(samples, 0)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
    expect(samples[0]).toBe(5); // not sorted in place
  });

  it('summarizes and compares', () => {
    const summary = summarize(Array.from({ length: 100 }, (_, index) => index + 1));
    expect(summary).toMatchObject({ n: 100, p50: 50, p99: 99, min: 1, mean: 50.5 });
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(1, 0)).toBeNaN();
  });
});

describe('bench heap snapshots', () => {
  it('sums the self sizes of the nodes, whatever the field order', () => {
    const snapshot = {
      snapshot: { meta: { node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'] } },
      nodes: [0, 1, 1, 100, 0, 3, 2, 2, 28, 1],
    };
    expect(liveBytesOf(JSON.stringify(snapshot))).toBe(128);
  });
});

describe('bench setups', () => {
  let setup: BenchSetup | undefined;
  afterEach(async () => {
    await setup?.cleanup();
  });

  it('generates the same distinct tools on every run', () => {
    const tools = generateTools(7, 150);
    expect(new Set(tools.map((tool) => tool.name)).size).toBe(150);
    expect(generateTools(7, 150)).toEqual(tools);
    expect(tools.every((tool) => tool.inputSchema.type === 'object' && (tool.description ?? '').length > 20)).toBe(true);
  });

  it('writes servers.yaml, catalog.json and toolsets that loadout reads back', async () => {
    setup = await createSetup({
      servers: 3,
      toolsPerServer: 4,
      echoTools: [{ name: 'echo', inputSchema: { type: 'object' } }],
      toolsets: { pick: ['s001.get_file'] },
    });
    const { config } = await loadServersFile(setup.paths.serversFile);
    expect(Object.keys(config.servers)).toEqual(['echo', 's000', 's001', 's002']);
    const cache = await readDefinitionCache(setup.paths.catalogCacheFile);
    expect(Object.values(cache).reduce((total, entry) => total + entry.tools.length, 0)).toBe(13);
    expect(setup.toolIds).toHaveLength(12);
    expect((await new ToolsetStore(setup.paths.toolsetsDir).get('pick')).tools).toEqual(['s001.get_file']);
  });
});

describe('npm run bench -- --quick', () => {
  it('runs warm start and equip/search end to end: no children at start, one list_changed per equip', async () => {
    const rows = await runBench({ quick: true, only: ['warm-start', 'equip-search'] });
    expect(rows.map((row) => row.id)).toEqual(['2a', '2b', '2a′', '2b′', '4a', '4b', '5a', '5b']);
    for (const row of rows) {
      for (const value of Object.values(row.values)) expect(Number.isFinite(value)).toBe(true);
    }
    expect(rows.filter((row) => row.id.startsWith('2')).map((row) => row.values.maxChildren)).toEqual([0, 0, 0, 0]);
    expect(rows.filter((row) => row.id.startsWith('4')).map((row) => row.values.oneNotificationEach)).toEqual([1, 1]);
  }, 180_000);

  it('runs forwarding over stdio in both eras and HTTP, then leaves no gateway, fixture or session process behind', async () => {
    const rows = await runBench({ quick: true, only: ['forwarding'] });
    expect(rows.map((row) => row.id)).toEqual([
      '1a',
      '1b',
      '1c',
      '1d',
      '1d',
      '1e',
      '1f',
      '1a′',
      '1b′',
      '1c′',
      '1d′',
      '1e′',
      '1f′',
      '1h',
      '1i',
    ]);
    expect(rows.slice(3, 7).map((row) => row.figure)).toEqual([
      '8 concurrent callers, calls/s (stdio)',
      '8 concurrent callers, calls/s (http, 8 sessions)',
      'CPU per call in the middle process, sequential (stdio)',
      'CPU per call in the middle process, 8 concurrent callers (stdio)',
    ]);
    // The 2026-07-28 rows name the era loadout reached the serveStdio echo server in: loadout
    // negotiates downstream, so that is 2026-07-28, and the server refusing 2025 is reachable (1i).
    expect(rows[7]!.figure).toMatch(/2026-07-28 client; loadout → server in 2026-07-28\)$/);
    expect(rows.at(-1)!.values.reachable).toBe(1);
    for (const row of rows) {
      for (const value of Object.values(row.values)) expect(Number.isFinite(value)).toBe(true);
    }
    expect(await descendantsOf(process.pid)).toEqual([]);
  }, 120_000);

  it('runs telemetry: on ÷ off for three configurations, sequential and concurrent, and leaves no process behind', async () => {
    const rows = await runBench({ quick: true, only: ['telemetry'] });
    expect(rows.map((row) => row.id)).toEqual(['8a', '8b', '8c', '8d', '8e', '8f']);
    for (const row of rows) {
      expect(row.values.telemetryOnCpuMsPerCall).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(row.values.telemetryOffCpuMsPerCall)).toBe(true);
    }
    expect(await descendantsOf(process.pid)).toEqual([]);
  }, 120_000);

  it('runs sandbox: sandboxed and unsandboxed first calls and warm calls of the same server, and leaves no process behind', async () => {
    const rows = await runBench({ quick: true, only: ['sandbox'] });
    expect(rows.map((row) => row.id)).toEqual(['11a', '11b', '11c']);
    for (const row of rows) {
      expect(row.values.sandboxedP50Ms).toBeGreaterThan(0);
      expect(row.values.unsandboxedP50Ms).toBeGreaterThan(0);
    }
    expect(await descendantsOf(process.pid)).toEqual([]);
  }, 120_000);

  it('runs memory: a live heap figure after each round and per HTTP session, and no snapshot or process left behind', async () => {
    const heapDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('loadout-bench-heap-'));
    const before = await heapDirs();
    const rows = await runBench({ quick: true, only: ['memory'] });
    expect(rows.map((row) => row.id)).toEqual(['7a', '7b', '7c']);
    const { afterFirstRoundLiveHeapBytes, afterSecondRoundLiveHeapBytes } = rows[1]!.values;
    // A real heap: more than the 2,500 cached tool definitions alone would take.
    expect(afterFirstRoundLiveHeapBytes).toBeGreaterThan(1024 * 1024);
    expect(afterSecondRoundLiveHeapBytes).toBeGreaterThan(1024 * 1024);
    // Each 2025-era HTTP session holds something (its Server and transport), and less than 1 MiB.
    expect(rows[2]!.values.perSessionBytes).toBeGreaterThan(1024);
    expect(rows[2]!.values.perSessionBytes).toBeLessThan(1024 * 1024);
    expect(await heapDirs()).toEqual(before);
    expect(await descendantsOf(process.pid)).toEqual([]);
  }, 120_000);
});
