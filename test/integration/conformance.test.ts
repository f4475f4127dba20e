// The public MCP conformance suite's server scenarios (npm run conformance) against loadout in
// front of server-everything and the content fixture: every scenario passes (about 10 s).
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, makeTempDirs, type TempDirs } from '../helpers/gateway.js';

describe('MCP conformance suite (server scenarios)', () => {
  let dirs: TempDirs;
  beforeAll(async () => {
    dirs = await makeTempDirs();
  });
  afterAll(async () => {
    await dirs.cleanup();
  });

  it('passes every scenario', async () => {
    const report = path.join(dirs.root, 'conformance.json');
    const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/conformance/run.mjs'), '--json', report], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const { results } = JSON.parse(await readFile(report, 'utf8')) as {
      results: Array<{ scenario: string; ok: boolean; failed: string[] }>;
    };
    expect(results.length).toBeGreaterThanOrEqual(30);
    expect(results.filter((result) => !result.ok)).toEqual([]);
    expect(run.status, run.stdout.slice(-2000)).toBe(0);
  }, 150_000);
});
