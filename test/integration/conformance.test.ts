// The public MCP conformance suite's server scenarios (npm run conformance) against loadout in
// front of server-everything and the content fixture, in three sets: the legacy suite (0.1.x, every
// scenario), and the 0.2 alpha suite's requirement sets for 2025-11-25 and 2026-07-28. Every
// scenario passes except those in scripts/conformance/expected-failures.<set>.yml, each with its
// reason, and no entry there passes (a stale entry fails the run). About 30 s.
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, makeTempDirs, type TempDirs } from '../helpers/gateway.js';

interface SetReport {
  set: string;
  results: Array<{ scenario: string; ok: boolean; unexpected: string[]; expected: string[] }>;
  stale: string[];
}

describe('MCP conformance suite (server scenarios)', () => {
  let dirs: TempDirs;
  beforeAll(async () => {
    dirs = await makeTempDirs();
  });
  afterAll(async () => {
    await dirs.cleanup();
  });

  it('passes every scenario of each set but its expected failures', async () => {
    const report = path.join(dirs.root, 'conformance.json');
    const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/conformance/run.mjs'), '--json', report], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    const { sets } = JSON.parse(await readFile(report, 'utf8')) as { sets: SetReport[] };
    const bySet = new Map(sets.map((set) => [set.set, set]));
    expect([...bySet.keys()]).toEqual(['legacy', '2025-11-25', '2026-07-28']);
    const legacy = bySet.get('legacy')!.results;
    expect(legacy.length).toBeGreaterThanOrEqual(30);
    expect(legacy.filter((result) => !result.ok)).toEqual([]);
    // The stateless era's own scenarios ran, in front of the fixture speaking 2026-07-28 too.
    const modern = bySet.get('2026-07-28')!.results;
    for (const scenario of ['server-stateless', 'caching', 'sep-2164-resource-not-found', 'input-required-result-multi-round'])
      expect(modern.find((result) => result.scenario === scenario)?.ok, scenario).toBe(true);
    for (const { set, results, stale } of sets) {
      expect(results.filter((result) => result.unexpected.length).map((result) => `${set} ${result.scenario}`)).toEqual([]);
      expect(stale, set).toEqual([]);
    }
    expect(run.status, run.stdout.slice(-2000)).toBe(0);
  }, 300_000);
});
