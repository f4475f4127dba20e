// Downstream OAuth in store mode: `loadout auth` keeps the tokens in the team store (encrypted),
// another replica with its own data dir uses them, and no `oauth/` file appears anywhere. A
// replica with the wrong LOADOUT_SECRET_KEY reports the server as needing authorization and
// leaves the sealed tokens as they are; the failure it records is forgotten once a replica with the
// right key has used the tokens.
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauthServer.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { CLI, makeTempDirs, startGateway, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';
import { openPostgresStore } from '../../src/store/index.js';
import type { DiscoveryRecord } from '../../src/config/index.js';

/** `loadout auth linear` in store mode, playing the browser on the URL it prints. */
async function login(dirs: TempDirs, env: Record<string, string>): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, '--config', dirs.configDir, '--data', dirs.dataDir, 'auth', 'linear', '--no-browser'], {
    env: { ...process.env, HOME: path.join(dirs.root, 'home'), NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<CliRun>((resolve) => child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr })));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void done.then((run) => reject(new Error(`loadout auth exited ${run.code} before printing a URL:\n${run.stdout}${run.stderr}`)));
  });
  const authorize = await fetch(url, { redirect: 'manual' });
  expect(authorize.status).toBe(302);
  expect((await fetch(authorize.headers.get('location')!)).status).toBe(200);
  return done;
}

describe('downstream OAuth in store mode', () => {
  // A database per test: each begins with no login, no listing and no recorded failure.
  let database: { url: string; drop: () => Promise<void> };
  const databaseUrl = (): string => database.url;
  let oauth: OAuthFixture;
  let first: TempDirs;
  let second: TempDirs;
  beforeEach(async () => {
    database = await createDatabase(postgresServerUrl());
    oauth = await startOAuthFixture();
    first = await makeTempDirs();
    second = await makeTempDirs();
    for (const dirs of [first, second]) await writeServersYaml(dirs.configDir, { linear: { type: 'http', url: oauth.mcpUrl } });
  });
  afterEach(async () => {
    await oauth.close();
    await first.cleanup();
    await second.cleanup();
    await database.drop();
  });

  it('logs in through one replica and reaches the server from another, with no oauth files', async () => {
    const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
    const run = await login(first, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Authorized 'linear'; tokens saved in the team store");

    const refreshed = await runCli(second, ['refresh'], { env });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const listed = await runCli(second, ['list', '--json'], { env });
    expect(listed.stdout).toContain('linear.echo');
    expect(oauth.counts).toMatchObject({ registrations: 1, logins: 1 });
    for (const dirs of [first, second]) expect(await readdir(dirs.dataDir)).not.toContain('oauth');

    // The wrong key cannot open the tokens: the server needs authorization, and the tokens stay sealed.
    const wrongKey = await runCli(second, ['refresh'], {
      env: { ...env, LOADOUT_SECRET_KEY: 'another-key-0123456789abcdefghijklmnopqrs' },
    });
    expect(`${wrongKey.stdout}${wrongKey.stderr}`).toMatch(/Server 'linear' needs authorization: its stored OAuth token is unreadable/);
    const wrongStatus = await runCli(second, ['status'], {
      env: { ...env, LOADOUT_SECRET_KEY: 'another-key-0123456789abcdefghijklmnopqrs' },
    });
    expect(wrongStatus.stdout).toContain('linear: needs authorization: run loadout auth linear');
    expect((await runCli(second, ['status'], { env })).stdout).not.toContain('needs authorization');
    const again = await runCli(first, ['refresh'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(oauth.counts).toMatchObject({ registrations: 1, logins: 1 });
  });

  it('forgets the failed authorization a wrong key recorded once a replica with the right key has connected with the tokens', async () => {
    const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
    expect((await login(first, env)).code).toBe(0);
    expect((await runCli(first, ['refresh'], { env })).code).toBe(0);
    await runCli(second, ['refresh'], { env: { ...env, LOADOUT_SECRET_KEY: 'another-key-0123456789abcdefghijklmnopqrs' } });
    expect((await recordOf('linear'))?.failure.code).toBe('NEEDS_AUTHORIZATION');

    const gateway = await startGateway({ dirs: second, env });
    try {
      const echoed = await gateway.client.callTool({
        name: 'call-tool',
        arguments: { tool: 'linear.echo', arguments: { text: 'usable' } },
      });
      expect(textOf(echoed)).toBe('usable');
    } finally {
      // Its record writes are done before it exits.
      await gateway.close();
    }
    expect(await recordOf('linear')).toBeUndefined();
  });

  it('discovers a server the wrong key failed to, at the first search of a replica with the right key, before the retry that failure set', async () => {
    const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
    expect((await login(first, env)).code).toBe(0);
    await runCli(second, ['refresh'], { env: { ...env, LOADOUT_SECRET_KEY: 'another-key-0123456789abcdefghijklmnopqrs' } });
    expect(Date.parse((await recordOf('linear'))!.retryAt)).toBeGreaterThan(Date.now());
    const status = JSON.parse((await runCli(second, ['status', '--json'], { env })).stdout) as { servers: Array<{ discovered: boolean }> };
    expect(status.servers[0]?.discovered).toBe(false);

    const gateway = await startGateway({ dirs: second, env });
    try {
      const found = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
      expect(found).toContain('linear.echo');
      expect(found).not.toContain('needs authorization');
    } finally {
      await gateway.close();
    }
    expect(await recordOf('linear')).toBeUndefined();
  });

  // The stored discovery record of `server`, read as status and every replica read it.
  async function recordOf(server: string): Promise<DiscoveryRecord | undefined> {
    const store = await openPostgresStore({ url: databaseUrl(), secretKey: TEST_SECRET_KEY, listen: false });
    try {
      return (await store.discovery.get(server))?.value;
    } finally {
      await store.close();
    }
  }
});
