// `loadout store …` run as the built CLI against the test Postgres: migrate and status, faults as
// one line, and a data dir made by real loadout commands imported and exported back byte for byte.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerOptimizationSchema, StateStore, updateOAuthRecord } from '../../src/config/index.js';
import { linesOf, runCli } from '../helpers/cli.js';
import { fixture, makeTempDirs, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { freePort } from '../helpers/http.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

describe('loadout store', () => {
  const databaseUrl = usePostgresDatabase();
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await dirs.cleanup();
  });
  const store = (args: string[], env: Record<string, string> = {}) =>
    runCli(dirs, ['store', ...args], { env: { LOADOUT_STORE_URL: databaseUrl(), LOADOUT_SECRET_KEY: TEST_SECRET_KEY, ...env } });

  it('migrates once, then reports the schema up to date with records per kind', async () => {
    const status = await store(['status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({
      version: 0,
      knownVersion: 6,
      pending: [
        '0001_initial',
        '0002_audit_records',
        '0003_limit_buckets',
        '0004_replica_heartbeats',
        '0005_audit_record_ids',
        '0006_client_habits',
      ],
    });
    expect((await store(['migrate'])).stdout).toMatch(/: schema at version 6 \(\d+ ms\)\.\n$/);
    const after = await store(['status']);
    expect(after.code).toBe(0);
    expect(linesOf(after.stdout)[0]).toMatch(
      /^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/loadout_test_\w+: schema at version 6, up to date\.$/,
    );
    expect(after.stdout).toContain('toolsets');
  });

  it('fails with one line naming the masked URL and the cause, exit code 1', async () => {
    const port = await freePort();
    const unreachable = await store(['status'], { LOADOUT_STORE_URL: `postgres://me:hunter2@127.0.0.1:${port}/db` });
    expect(unreachable.code).toBe(1);
    expect(linesOf(unreachable.stderr)).toEqual([
      `loadout: store postgres://me:***@127.0.0.1:${port}/db: cannot connect: nothing is listening there (is Postgres running?) (ECONNREFUSED)`,
    ]);
    const none = await runCli(dirs, ['store', 'status'], { env: { LOADOUT_STORE_URL: '' } });
    expect(linesOf(none.stderr)).toEqual([
      expect.stringMatching(/^loadout: no store named: pass --store postgres:\/\/.* or set LOADOUT_STORE_URL$/),
    ]);
  });

  it('imports a data dir made by real loadout commands, and exports it back byte for byte', async () => {
    await writeServersYaml(dirs.configDir, {
      echo: { command: process.execPath, args: [fixture('echo')] },
      broken: { command: process.execPath, args: [fixture('crash')], env: { CRASH_UNLESS_FILE: path.join(dirs.root, 'never') } },
    });
    await runCli(dirs, ['refresh']);
    expect((await runCli(dirs, ['toolset', 'create', 'dev', 'echo.echo', '--description', 'Echo things'])).code).toBe(0);
    expect((await runCli(dirs, ['toolset', 'equip', 'dev'])).code).toBe(0);
    // What serve writes for a principal and for OAuth, through the modules that write them.
    await mkdir(path.join(dirs.dataDir, 'principals'));
    await writeFile(
      path.join(dirs.dataDir, 'principals', '0123456789abcdef0123456789abcdef.json'),
      `${JSON.stringify({ toolset: 'dev' })}\n`,
    );
    await writeFile(
      path.join(dirs.dataDir, 'learned-words.json'),
      `${JSON.stringify({ version: 1, tools: { 'echo.echo': { repeat: [1.5, 1700000000000] } } })}\n`,
    );
    await updateOAuthRecord(path.join(dirs.dataDir, 'oauth', 'remote.json'), 'https://example.test/mcp', (record) => ({
      ...record,
      tokens: { access_token: 'a-token', token_type: 'Bearer' },
      tokensSavedAt: '2026-01-01T00:00:00.000Z',
    }));

    // What optimize keeps for a server, through state.json's owner.
    await new StateStore(path.join(dirs.dataDir, 'state.json')).update((state) => ({
      ...state,
      optimization: {
        servers: {
          echo: ServerOptimizationSchema.parse({ canonical: { echo: { description: 'Echo', inputSchema: { type: 'object' } } } }),
        },
      },
    }));

    const before = await listing(dirs.dataDir);
    const imported = await store(['import', dirs.dataDir]);
    expect(imported.stderr).toBe('');
    // Import only reads: not a file of the data dir is added or changed (no revision ledger either).
    expect(await listing(dirs.dataDir)).toEqual(before);
    expect(linesOf(imported.stdout)[0]).toMatch(
      /^Imported into .*: catalog 1, discovery 1, toolsets 1, equipped 2, learnedWords 1, optimization 1, oauth 1\.$/,
    );

    const out = path.join(dirs.root, 'exported');
    const exported = await store(['export', out]);
    expect(exported.code).toBe(0);
    const files = [
      'catalog.json',
      'discovery.json',
      'state.json',
      'learned-words.json',
      'principals/0123456789abcdef0123456789abcdef.json',
      'oauth/remote.json',
    ];
    for (const file of files)
      expect(await readFile(path.join(out, file), 'utf8'), file).toBe(await readFile(path.join(dirs.dataDir, file), 'utf8'));
    expect(await readFile(path.join(out, 'toolsets', 'dev.yaml'), 'utf8')).toBe(
      await readFile(path.join(dirs.configDir, 'toolsets', 'dev.yaml'), 'utf8'),
    );
    expect((await readdir(path.join(out, 'oauth'))).length).toBe(1);
    // The files store's revision ledger is its own bookkeeping, not part of the data dir exported.
    expect(await readdir(out)).not.toContain('store-revisions.json');

    // Without the key the tokens are refused, one line, and nothing else is half-exported.
    const noKey = await store(['export', path.join(dirs.root, 'again')], { LOADOUT_SECRET_KEY: '' });
    expect(noKey.code).toBe(1);
    expect(linesOf(noKey.stderr)).toEqual([expect.stringMatching(/^loadout: LOADOUT_SECRET_KEY is not set/)]);
    await expect(readdir(path.join(dirs.root, 'again'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses an import with a file it cannot read, one line naming it, before writing anything', async () => {
    await writeFile(
      path.join(dirs.dataDir, 'learned-words.json'),
      `${JSON.stringify({ version: 1, tools: { 'echo.echo': { repeat: [1, 1700000000000] } } })}\n`,
    );
    await mkdir(path.join(dirs.configDir, 'toolsets'));
    await writeFile(path.join(dirs.configDir, 'toolsets', 'dev.yaml'), 'name: dev\ntools: [unclosed\n');
    // The file's database is shared by its tests: compare with what it held before.
    const counts = async () => (JSON.parse((await store(['status', '--json'])).stdout) as { counts: unknown }).counts;
    await store(['migrate']);
    const before = await counts();
    const refused = await store(['import', dirs.dataDir]);
    expect(refused.code).toBe(1);
    expect(linesOf(refused.stderr)).toEqual([expect.stringMatching(/^loadout: \S+\/toolsets\/dev\.yaml:\d+:\d+: /)]);
    expect(await counts()).toEqual(before);
  });

  it('imports without claiming the data dir of its own environment', async () => {
    const source = path.join(dirs.root, 'other-data');
    await mkdir(source);
    const imported = await store(['import', source]);
    expect(imported.code).toBe(0);
    expect(linesOf(imported.stdout)[0]).toMatch(/^Imported into .*: nothing\.$/);
    await expect(readdir(dirs.dataDir)).resolves.toEqual([]);
    await expect(readdir(source)).resolves.toEqual([]);
  });
});

/** Every file under `dir` with its text, by path. */
async function listing(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  const texts = await Promise.all(
    files.sort().map(async (file): Promise<[string, string]> => [path.relative(dir, file), await readFile(file, 'utf8')]),
  );
  return Object.fromEntries(texts);
}
