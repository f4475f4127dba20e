import { spawn } from 'node:child_process';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauthServer.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { CLI, textOf, useGatewaySandbox, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

const NEEDS_AUTH = 'needs authorization: run loadout auth linear';

/** A running `loadout auth` child: the login URL it printed, and how it ended. */
interface AuthRun {
  url: Promise<string>;
  done: Promise<CliRun>;
}

function startAuth(dirs: TempDirs, server: string): AuthRun {
  const child = spawn(
    process.execPath,
    [CLI, '--config', dirs.configDir, '--data', dirs.dataDir, 'auth', server, '--no-browser', '--timeout', '30'],
    {
      env: { ...process.env, HOME: path.join(dirs.root, 'home'), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<CliRun>((resolve) => child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr })));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void done.then((run) => reject(new Error(`loadout auth exited ${run.code} before printing a URL:\n${run.stdout}${run.stderr}`)));
  });
  return { url, done };
}

/** Play the browser: open the authorization URL, follow its redirect to loadout's loopback listener. */
async function actAsBrowser(authorizationUrl: string): Promise<{ status: number; body: string }> {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(authorize.status).toBe(302);
  const callback = await fetch(authorize.headers.get('location')!);
  return { status: callback.status, body: await callback.text() };
}

async function login(dirs: TempDirs): Promise<CliRun> {
  const run = startAuth(dirs, 'linear');
  const page = await actAsBrowser(await run.url);
  expect(page).toMatchObject({ status: 200, body: expect.stringContaining("'linear' is authorized") });
  return run.done;
}

describe('downstream OAuth', () => {
  const sandbox = useGatewaySandbox();
  let oauth: OAuthFixture;
  let tokenFile: string;
  beforeEach(async () => {
    oauth = await startOAuthFixture();
    await writeServersYaml(sandbox.dirs.configDir, { linear: { type: 'http', url: oauth.mcpUrl } });
    tokenFile = path.join(sandbox.dirs.dataDir, 'oauth', 'linear.json');
  });
  afterEach(async () => {
    await oauth.close();
  });

  it('needs authorization until `loadout auth`, then forwards calls with the stored token', async () => {
    const gateway = await sandbox.start();
    const callEcho = (text: string): ReturnType<typeof gateway.client.callTool> =>
      gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text } } });
    const found = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(found).toMatch(/^! linear: not discovered: failed at .*\. Server 'linear' needs authorization: run loadout auth linear$/m);
    const refused = await callEcho('too early');
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(`Server 'linear' ${NEEDS_AUTH}`);
    expect(textOf(refused)).not.toMatch(/invalid_token|restart loadout/);
    // Told by the failure's code, kept in discovery.json beside its text.
    expect(textOf(refused)).toContain('its tools are unknown until then. Call again after logging in.');
    const status = await runCli(sandbox.dirs, ['status']);
    expect(status.stdout).toContain(`linear: ${NEEDS_AUTH}`);
    expect(status.code).toBe(1);
    const statusJson = JSON.parse((await runCli(sandbox.dirs, ['status', '--json'])).stdout) as { servers: Array<{ discovery: unknown }> };
    expect(statusJson.servers[0]?.discovery).toMatchObject({
      state: 'failed',
      code: 'NEEDS_AUTHORIZATION',
      error: `Server 'linear' ${NEEDS_AUTH}`,
    });
    // The gateway never registered a client on its own: that belongs to a login.
    expect(oauth.counts.registrations).toBe(0);

    const run = await login(sandbox.dirs);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Authorized 'linear'");
    expect(oauth.counts).toMatchObject({ registrations: 1, logins: 1 });
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(tokenFile))).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens: { access_token: string }; needsAuthorizationSince?: string };
    expect(stored.needsAuthorizationSince).toBeUndefined();
    expect(await readFile(path.join(sandbox.dirs.configDir, 'servers.yaml'), 'utf8')).not.toContain(stored.tokens.access_token);
    expect((await runCli(sandbox.dirs, ['status'])).stdout).not.toContain(NEEDS_AUTH);

    // The running gateway picks the login up: no restart.
    expect(textOf(await callEcho('through oauth'))).toBe('through oauth');
    const who = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.whoami', arguments: {} } });
    expect(textOf(who)).not.toBe('(none)');
    expect(textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }))).not.toContain('not discovered');
  });

  it('forgets a failed authorization recorded before the gateway started once the login is made, in every answer', async () => {
    // Two failed refreshes: the recorded retry is 30-60 s away, beyond this test's end.
    for (let attempt = 0; attempt < 2; attempt++) expect((await runCli(sandbox.dirs, ['refresh'])).code).toBe(1);
    const gateway = await sandbox.start();
    const callEcho = (): ReturnType<typeof gateway.client.callTool> =>
      gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text: 'logged in' } } });
    expect(textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }))).toContain(NEEDS_AUTH);
    expect(textOf(await callEcho())).toContain('Call again after logging in.');

    expect((await login(sandbox.dirs)).code).toBe(0);
    // The unknown-tool answer and the search notices read the tokens as they are now, not the record.
    expect(textOf(await callEcho())).toBe('logged in');
    const found = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(found).toContain('linear.echo');
    expect(found).not.toContain('needs authorization');
    const statusJson = JSON.parse((await runCli(sandbox.dirs, ['status', '--json'])).stdout) as { servers: Array<{ discovery: unknown }> };
    expect(statusJson.servers[0]?.discovery).toBeNull();
  });

  it('fails with one readable line and stores no token when the user refuses the login', async () => {
    oauth.refuseLogins = true;
    const run = startAuth(sandbox.dirs, 'linear');
    const page = await actAsBrowser(await run.url);
    expect(page.status).toBe(400);
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe("loadout: Authorization of 'linear' was refused: access_denied (the user declined)");
    const stored = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens?: unknown };
    expect(stored.tokens).toBeUndefined();
  });

  it('refreshes an expired access token for parallel calls, without the user noticing', async () => {
    expect((await login(sandbox.dirs)).code).toBe(0);
    const gateway = await sandbox.start();
    const call = async (text: string): Promise<string> =>
      textOf(await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text } } }));
    expect(await call('first')).toBe('first');
    const { tokens: first } = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens: { access_token: string } };
    oauth.expireAccessTokens();
    // Parallel calls all meet the expired token; refreshes of one refresh token share one token
    // request, so the rotating authorization server never sees a used refresh token again (it
    // would refuse it, and every call after that would need a new login).
    expect(await Promise.all(['a', 'b', 'c'].map((text) => call(text)))).toEqual(['a', 'b', 'c']);
    expect(oauth.counts.refreshes).toBeGreaterThanOrEqual(1);
    expect(await call('later')).toBe('later');
    const { tokens: second } = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens: { access_token: string } };
    expect(second.access_token).not.toBe(first.access_token);
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
  });

  it('renews an access token that is about to end before using it, so no call meets a refusal', async () => {
    expect((await login(sandbox.dirs)).code).toBe(0);
    const stored = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens: { access_token: string; expires_in: number } };
    // As if the login were an hour old: the token has 10 s left.
    const savedAt = new Date(Date.now() - (stored.tokens.expires_in - 10) * 1000).toISOString();
    await writeFile(tokenFile, JSON.stringify({ ...stored, tokensSavedAt: savedAt }), { mode: 0o600 });
    const refusalsBefore = oauth.counts.refusals;
    const gateway = await sandbox.start();
    const echoed = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text: 'on time' } } });
    expect(textOf(echoed)).toBe('on time');
    expect(oauth.counts.refreshes).toBe(1);
    expect(oauth.counts.refusals).toBe(refusalsBefore);
    const renewed = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens: { access_token: string }; tokensSavedAt: string };
    expect(renewed.tokens.access_token).not.toBe(stored.tokens.access_token);
    expect(Date.parse(renewed.tokensSavedAt)).toBeGreaterThan(Date.parse(savedAt));
  });

  it('keeps using a token about to end when renewing it fails, without asking for a login or retrying per call', async () => {
    expect((await login(sandbox.dirs)).code).toBe(0);
    const stored = JSON.parse(await readFile(tokenFile, 'utf8')) as { tokens: { expires_in: number } };
    const savedAt = new Date(Date.now() - (stored.tokens.expires_in - 10) * 1000).toISOString();
    await writeFile(tokenFile, JSON.stringify({ ...stored, tokensSavedAt: savedAt }), { mode: 0o600 });
    oauth.failRefreshes = true;
    const gateway = await sandbox.start();
    const call = async (text: string): Promise<string> =>
      textOf(await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text } } }));
    expect(await call('still valid')).toBe('still valid');
    const tried = oauth.counts.failedRefreshes;
    expect(tried).toBeGreaterThanOrEqual(1);
    // After a failed renewal the connection pauses: the next calls make no token request.
    expect(await call('and again')).toBe('and again');
    expect(await call('and once more')).toBe('and once more');
    expect(oauth.counts.failedRefreshes).toBe(tried);
    const after = JSON.parse(await readFile(tokenFile, 'utf8')) as { needsAuthorizationSince?: string; tokens?: unknown };
    expect(after.needsAuthorizationSince).toBeUndefined();
    expect(after.tokens).toBeDefined();
    expect((await runCli(sandbox.dirs, ['status'])).stdout).not.toContain(NEEDS_AUTH);
  });

  it('says `needs authorization` when the refresh token was revoked, and works again after a new login', async () => {
    expect((await login(sandbox.dirs)).code).toBe(0);
    const gateway = await sandbox.start();
    const call = async (): Promise<{ text: string; isError: boolean }> => {
      const result = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text: 'hi' } } });
      return { text: textOf(result), isError: result.isError === true };
    };
    expect(await call()).toEqual({ text: 'hi', isError: false });
    oauth.expireAccessTokens();
    oauth.revokeRefreshTokens();
    const refused = await call();
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`Server 'linear' ${NEEDS_AUTH}`);
    expect(refused.text).not.toContain('invalid_token');
    expect((await runCli(sandbox.dirs, ['status'])).stdout).toContain(`linear: ${NEEDS_AUTH}`);
    // A login while the gateway runs is picked up by its next call.
    expect((await login(sandbox.dirs)).code).toBe(0);
    expect(await call()).toEqual({ text: 'hi', isError: false });
  });

  it('logs in to an SSE server and forwards calls with its token, refreshing it when it expires', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { linear: { type: 'sse', url: oauth.sseUrl } });
    expect((await login(sandbox.dirs)).code).toBe(0);
    const gateway = await sandbox.start();
    const call = async (tool: string, args: Record<string, unknown>): Promise<string> =>
      textOf(await gateway.client.callTool({ name: 'call-tool', arguments: { tool: `linear.${tool}`, arguments: args } }));
    expect(await call('echo', { text: 'over sse' })).toBe('over sse');
    expect(await call('whoami', {})).not.toBe('(none)');
    oauth.expireAccessTokens();
    expect(await call('echo', { text: 'after expiry' })).toBe('after expiry');
    expect(oauth.counts.refreshes).toBe(1);
  });

  it('writes no expanded ${VAR} of the url to the data dir, and uses the stored token', async () => {
    const secret = `url-secret-${Date.now()}`;
    const url = `${oauth.mcpUrl}?key=\${LINEAR_URL_KEY}`;
    process.env.LINEAR_URL_KEY = secret;
    try {
      await writeServersYaml(sandbox.dirs.configDir, { linear: { type: 'http', url } });
      expect((await login(sandbox.dirs)).code).toBe(0);
      const gateway = await sandbox.start();
      const call = async (text: string): Promise<string> =>
        textOf(await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text } } }));
      expect(await call('with the stored token')).toBe('with the stored token');
      oauth.expireAccessTokens();
      expect(await call('after a refresh')).toBe('after a refresh');
      expect(oauth.counts).toMatchObject({ logins: 1, refreshes: 1 });
      await gateway.close();
      const files = await readdir(sandbox.dirs.dataDir, { recursive: true, withFileTypes: true });
      const written = files.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
      expect(written).toContain(tokenFile);
      for (const file of written) expect(await readFile(file, 'utf8'), file).not.toContain(secret);
    } finally {
      delete process.env.LINEAR_URL_KEY;
    }
  });

  it('forgets the tokens on --logout', async () => {
    expect((await login(sandbox.dirs)).code).toBe(0);
    const logout = await runCli(sandbox.dirs, ['auth', 'linear', '--logout']);
    expect(logout).toMatchObject({ code: 0, stdout: "Forgot the tokens of 'linear'.\n" });
    await expect(stat(tokenFile)).rejects.toThrow(/ENOENT/);
    const gateway = await sandbox.start();
    const result = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'linear.echo', arguments: { text: 'hi' } } });
    expect(textOf(result)).toContain(NEEDS_AUTH);
  });

  it('refuses `loadout auth` for a stdio server with one line', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { local: { command: process.execPath, args: ['-e', ''] } });
    const run = await runCli(sandbox.dirs, ['auth', 'local']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("loadout: Server 'local' does not use OAuth: it is a stdio server\n");
  });
});
