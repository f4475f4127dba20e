// The commands that came to store mode late: doctor checks the store itself and records what it
// starts there, init discovers into the store, enrich reads the store's catalog, and setup (a
// single user's command) refuses with one line. None writes the data dir's state files.
import { access, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { updateOAuthRecord } from '../../src/config/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli.js';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

const STATE_FILES = ['catalog.json', 'discovery.json', 'state.json', 'learned-words.json'];

describe('store mode: doctor, init, enrich and setup', () => {
  const databaseUrl = usePostgresDatabase();
  let dirs: TempDirs;
  // Another machine's data dir: what it sees came through the store.
  let elsewhere: TempDirs;
  const env = () => ({ LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() });
  const expectNoStateFiles = async () => {
    for (const dataDir of [dirs.dataDir, elsewhere.dataDir])
      expect((await readdir(dataDir).catch(() => [])).filter((file) => STATE_FILES.includes(file))).toEqual([]);
  };

  beforeEach(async () => {
    dirs = await makeTempDirs();
    elsewhere = { ...dirs, dataDir: path.join(dirs.root, 'data-b') };
  });
  afterEach(() => dirs.cleanup());

  it('doctor checks the store (reachable, schema, listening, key) and records the servers it starts there', async () => {
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] },
    });
    // A fresh database: doctor looks, it does not migrate, and starts no server it could not record.
    const fresh = await runCli(dirs, ['doctor'], { env: env() });
    expect(fresh.code).toBe(1);
    expect(fresh.stdout).toMatch(/^problem store: schema at version 0; pending: 0001_\w+.* — fix: loadout store migrate/m);
    expect(fresh.stdout).toMatch(/^problem servers: not started: .*store/m);
    expect(fresh.stdout).not.toMatch(/server echo/);
    expect((await runCli(dirs, ['store', 'status', '--json'], { env: env() })).stdout).toContain('"version": 0');

    expect((await runCli(dirs, ['store', 'migrate'], { env: env() })).code).toBe(0);
    const run = await runCli(dirs, ['doctor'], { env: env() });
    expect(run.code, run.stderr).toBe(1);
    const storeLines = run.stdout.split('\n').filter((line) => / (store|LOADOUT_SECRET_KEY): /.test(line));
    expect(storeLines).toEqual([
      expect.stringMatching(/^ok +store: postgres:\/\/\S+ reachable \(\d+ ms\)$/),
      expect.stringMatching(/^ok +store: schema at version \d+, up to date$/),
      expect.stringMatching(/^ok +store: listening: this process hears other replicas' changes$/),
      expect.stringMatching(/^ok +LOADOUT_SECRET_KEY: set; opens the 0 stored OAuth token records$/),
    ]);
    expect(run.stdout).toMatch(/^ok +server echo: starts, 5 tools listed/m);
    expect(run.stdout).toMatch(/^problem server broken: does not start/m);

    const status = JSON.parse((await runCli(elsewhere, ['status', '--json'], { env: env() })).stdout) as {
      servers: Array<{ name: string; discovery: unknown }>;
    };
    expect(status.servers.find((server) => server.name === 'broken')?.discovery).toMatchObject({ state: 'failed', failures: 1 });
    await expectNoStateFiles();
  });

  it('doctor names an unreachable store (password masked) and a missing LOADOUT_SECRET_KEY, one line each, and exits 1', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const run = await runCli(dirs, ['--store', 'postgres://loadout:hunter2@127.0.0.1:1/nowhere', 'doctor'], {
      env: { LOADOUT_SECRET_KEY: '' },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^problem store: store postgres:\/\/loadout:\*\*\*@127\.0\.0\.1:1\/nowhere: cannot connect: .* — fix: /m);
    expect(run.stdout).toMatch(/^problem LOADOUT_SECRET_KEY: not set: .* — fix: /m);
    expect(run.stdout + run.stderr).not.toContain('hunter2');
    await expectNoStateFiles();
  });

  it('init writes servers.yaml (configuration) and discovers into the store, not into servers.yaml or the data dir', async () => {
    const from = path.join(dirs.root, 'clients.json');
    await writeFile(from, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } } }));
    const run = await runCli(dirs, ['init', '--from', from], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    const servers = parse(await readFile(path.join(dirs.configDir, 'servers.yaml'), 'utf8')) as { servers: Record<string, object> };
    expect(Object.keys(servers.servers)).toEqual(['echo']);
    expect(servers.servers.echo).not.toHaveProperty('tools');

    const listed = await runCli(elsewhere, ['list', '--json'], { env: env() });
    expect(
      (JSON.parse(listed.stdout) as Array<{ id: string; cached: boolean }>).filter((tool) => tool.cached).map((tool) => tool.id),
    ).toEqual(expect.arrayContaining(['echo.echo', 'echo.pid']));
    await expectNoStateFiles();
  });

  it('enrich reads the tools from the store and says where the example requests are kept', async () => {
    const model = path.join(dirs.root, 'model.mjs');
    await writeFile(
      model,
      `const prompt = process.argv[2];
       console.log(JSON.stringify(prompt.includes('echo.pid') ? ['which quagga answers me'] : ['do the usual thing']));`,
    );
    await writeServersYaml(
      dirs.configDir,
      { echo: nodeServer(fixture('echo')) },
      { optimization: { backend: 'command', command: [process.execPath, model, '{prompt}'] } },
    );
    expect((await runCli(dirs, ['refresh'], { env: env() })).code).toBe(0);

    const run = await runCli(dirs, ['enrich'], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Wrote example requests for 5 of 5 tools/);
    expect(run.stderr).toContain(`example requests kept in this data dir (${path.join(dirs.dataDir, 'example-requests.json')})`);
    const ranked = JSON.parse((await runCli(dirs, ['search', 'quagga', '--json'], { env: env() })).stdout) as {
      tools: Array<{ tool: string }>;
    };
    expect(ranked.tools[0]!.tool).toBe('echo.pid');
    await expectNoStateFiles();
  });

  // Last: it leaves a token in the file's database that the first doctor test would count.
  it('doctor says which stored tokens LOADOUT_SECRET_KEY does not open, and names the login that fixes it', async () => {
    const source = path.join(dirs.root, 'single-user');
    await mkdir(source);
    await updateOAuthRecord(path.join(source, 'oauth', 'remote.json'), 'https://example.test/mcp', (record) => ({
      ...record,
      tokens: { access_token: 'a-token', token_type: 'Bearer' },
    }));
    expect((await runCli(dirs, ['store', 'import', source], { env: env() })).code).toBe(0);
    await writeServersYaml(dirs.configDir, {});

    const run = await runCli(dirs, ['doctor'], { env: { ...env(), LOADOUT_SECRET_KEY: 'another-key-of-32-or-more-characters' } });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^problem LOADOUT_SECRET_KEY: set, but it does not open the stored tokens of remote — fix: set the key they were stored with, or log in again \(loadout auth remote\)$/m,
    );
  });

  it('setup refuses store mode with one line, exit 1, and writes nothing', async () => {
    const home = path.join(dirs.root, 'home');
    const run: CliRun = await runCli(dirs, ['setup', 'claude-code', '--yes'], { env: env() });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^loadout: setup does not work in store mode \(--store or LOADOUT_STORE_URL\): /),
    ]);
    await expect(access(path.join(home, '.claude.json'))).rejects.toThrow();
    expect(await readdir(dirs.configDir)).toEqual([]);
    expect(await readdir(dirs.dataDir)).toEqual([]);
  });

  it('audit reads the store without LOADOUT_SECRET_KEY: the key seals OAuth tokens, which audit never reads', async () => {
    expect((await runCli(dirs, ['store', 'migrate'], { env: env() })).code).toBe(0);
    const run = await runCli(dirs, ['audit', '--json'], { env: { ...env(), LOADOUT_SECRET_KEY: '' } });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ records: [], unreadableLines: 0 });
  });

  it('refuses --store "" (an unset variable) with one line and exit 1 on every command, instead of falling back to the data dir', async () => {
    for (const args of [['audit'], ['status'], ['list'], ['serve', '--http', '--port', '0'], ['store', 'status'], ['toolset', 'list']]) {
      const run = await runCli(dirs, ['--store', '', ...args], { env: { LOADOUT_SECRET_KEY: TEST_SECRET_KEY } });
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr.trim().split('\n'), args.join(' ')).toEqual([
        expect.stringMatching(/^loadout: option '--store <url>' argument '' is invalid/),
      ]);
    }
    expect(await readdir(dirs.dataDir).catch(() => [])).toEqual([]);
  });
});
