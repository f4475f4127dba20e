// Downstream OAuth in store mode: `loadout auth` keeps the tokens in the team store (encrypted),
// another replica with its own data dir uses them, and no `oauth/` file appears anywhere. A
// replica with the wrong LOADOUT_SECRET_KEY reports the server as needing authorization and
// leaves the sealed tokens as they are.
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauthServer.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { CLI, makeTempDirs, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

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
  const databaseUrl = usePostgresDatabase();
  let oauth: OAuthFixture;
  let first: TempDirs;
  let second: TempDirs;
  beforeEach(async () => {
    oauth = await startOAuthFixture();
    first = await makeTempDirs();
    second = await makeTempDirs();
    for (const dirs of [first, second]) await writeServersYaml(dirs.configDir, { linear: { type: 'http', url: oauth.mcpUrl } });
  });
  afterEach(async () => {
    await oauth.close();
    await first.cleanup();
    await second.cleanup();
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
});
