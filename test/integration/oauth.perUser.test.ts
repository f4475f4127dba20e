// Per-user credentials (`credentials: per-user`): two principals (two static tokens) call the same
// GitHub-like server behind loadout, which needs a bearer token from the authorization server the
// test runs on loopback and answers with whose token it got. Each principal is asked for their own
// authorization (a URL-mode elicitation to a client that declared it, else an isError result with
// the link), the browser comes back to loadout's /oauth/callback, and from then on each call
// arrives with that principal's own token, renewed silently when it expires. With the data dir and
// with the Postgres team store (the tokens sealed there, no oauth file written).
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { staticTokenPrincipal } from '../../src/identity/index.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauthServer.js';
import { openSignInPage } from '../helpers/oauthBrowser.js';
import { eventually, makeTempDirs, textOf, useGatewaySandbox, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectHttp, connectModernClient, startHttpGateway, type HttpClient, type ListeningProcess } from '../helpers/http.js';
import type { Client } from '@modelcontextprotocol/client';
import { runCli } from '../helpers/cli.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdefgh';
const LINK = /^Server 'github' needs your own authorization: open (\S+) in a browser to sign in, then call again\.$/;

/** Play the browser: sign in as `user` at the authorization page, follow its redirect back to loadout. */
async function signIn(oauth: OAuthFixture, user: string, link: string): Promise<{ status: number; body: string; callback: string }> {
  oauth.signedInUser = user;
  // The link opens loadout's page naming whose sign-in it is; its "Continue" leads to the authorization page.
  const authorize = await fetch((await openSignInPage(link)).authorizationUrl, { redirect: 'manual' });
  expect(authorize.status).toBe(302);
  const callback = authorize.headers.get('location')!;
  const page = await fetch(callback);
  return { status: page.status, body: await page.text(), callback };
}

function callWhoseToken(client: HttpClient | Client): Promise<string> {
  return ('client' in client ? client.client : client)
    .callTool({ name: 'call-tool', arguments: { tool: 'github.whose-token', arguments: {} } })
    .then((result) => (result.isError ? `ERROR ${textOf(result)}` : textOf(result)));
}

function linkOf(answer: string): string {
  const match = LINK.exec(answer.replace(/^ERROR /, ''));
  if (!match) throw new Error(`not an authorization link answer: ${answer}`);
  return match[1]!;
}

/** The loopback authorization server, a gateway serving ALICE and BOB behind it, and their clients. */
interface PerUserSetup {
  oauth: OAuthFixture;
  dirs: TempDirs;
  gateway: ListeningProcess;
  clients: Array<Pick<Client, 'close'>>;
}

async function startPerUser(env: Record<string, string>, policy?: Record<string, unknown>): Promise<PerUserSetup> {
  const oauth = await startOAuthFixture();
  const dirs = await makeTempDirs();
  const servers = { github: { type: 'http', url: oauth.mcpUrl, credentials: 'per-user' } };
  await writeServersYaml(dirs.configDir, servers, policy ? { policy } : {});
  return { oauth, dirs, gateway: await startHttpGateway(dirs, ['--token', ALICE, '--token', BOB], env), clients: [] };
}

async function stopPerUser({ oauth, dirs, gateway, clients }: PerUserSetup): Promise<void> {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await gateway.close();
  await oauth.close();
  await dirs.cleanup();
}

/** A 2025 client of `token`, declaring URL-mode elicitation when asked to. */
async function connectPerUser(setup: PerUserSetup, token: string, elicitation = false): Promise<HttpClient> {
  const client = await connectHttp(setup.gateway.url, { token, ...(elicitation ? { capabilities: { elicitation: { url: {} } } } : {}) });
  setup.clients.push(client);
  return client;
}

const MODES = [
  { name: 'data dir', store: false },
  { name: 'Postgres team store', store: true },
] as const;

describe.each(MODES)('per-user downstream credentials ($name)', ({ store }) => {
  const databaseUrl = usePostgresDatabase();
  let oauth: OAuthFixture;
  let dirs: TempDirs;
  let gateway: ListeningProcess;
  let env: Record<string, string>;
  let setup: PerUserSetup;
  let clients: PerUserSetup['clients'];
  beforeEach(async () => {
    env = store ? { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() } : {};
    setup = await startPerUser(env);
    ({ oauth, dirs, gateway, clients } = setup);
  });
  afterEach(() => stopPerUser(setup));
  const connect = (token: string, elicitation = false): Promise<HttpClient> => connectPerUser(setup, token, elicitation);

  it('asks each principal for their own authorization, then sends each call with their own token', async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB, true);
    const elicited: Array<Record<string, unknown>> = [];
    bob.client.setRequestHandler('elicitation/create', async (request) => {
      const { params } = request;
      elicited.push(params);
      if (params.mode !== 'url') throw new Error(`expected a URL-mode elicitation, got ${JSON.stringify(params)}`);
      const page = await signIn(oauth, 'bob', params.url);
      expect(page.status).toBe(200);
      return { action: 'accept' };
    });

    // Alice's client declared no elicitation: an isError result with the link and one sentence.
    const refused = await callWhoseToken(alice);
    expect(refused).toMatch(/^ERROR /);
    const aliceLink = new URL(linkOf(refused));
    expect(aliceLink.origin).toBe(new URL(gateway.url).origin);
    expect(aliceLink.pathname).toBe('/oauth/sign-in');
    const authorizationUrl = new URL((await openSignInPage(aliceLink.href)).authorizationUrl);
    const redirect = new URL(authorizationUrl.searchParams.get('redirect_uri')!);
    expect(redirect.origin).toBe(new URL(gateway.url).origin);
    expect(redirect.pathname).toBe('/oauth/callback');
    expect(authorizationUrl.searchParams.get('state')).toMatch(/^\S{16,}$/);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const page = await signIn(oauth, 'alice', aliceLink.href);
    expect(page).toMatchObject({ status: 200, body: expect.stringContaining("'github' is authorized") });
    const [aliceUser, aliceToken] = (await callWhoseToken(alice)).split(' ');
    expect(aliceUser).toBe('alice');

    // Bob's client declared URL-mode elicitation: asked to open the link, and his call then goes through.
    const [bobUser, bobToken] = (await callWhoseToken(bob)).split(' ');
    expect(bobUser).toBe('bob');
    expect(elicited).toEqual([{ mode: 'url', elicitationId: expect.any(String), url: expect.any(String), message: expect.any(String) }]);
    expect(bobToken).not.toBe(aliceToken);

    // From now on each call carries its own principal's token, whoever called last.
    for (let round = 0; round < 3; round++) {
      expect(await callWhoseToken(alice)).toBe(`alice ${aliceToken}`);
      expect(await callWhoseToken(bob)).toBe(`bob ${bobToken}`);
    }
    expect(oauth.counts.logins).toBe(2);
    expect(elicited).toHaveLength(1);

    // Each principal's tokens are kept in their own slot, beside the shared records.
    const slots = [ALICE, BOB].map((token) => `github@${staticTokenPrincipal(token).id}`);
    const oauthFiles = await readdir(path.join(dirs.dataDir, 'oauth')).catch(() => []);
    if (store) {
      expect(oauthFiles).toEqual([]);
    } else {
      expect(oauthFiles).toEqual(expect.arrayContaining(slots.map((slot) => `${slot}.json`)));
      const aliceRecord = JSON.parse(await readFile(path.join(dirs.dataDir, 'oauth', `${slots[0]}.json`), 'utf8')) as {
        tokens: { access_token: string };
      };
      expect(aliceRecord.tokens.access_token).toBe(aliceToken);
      // No shared token was ever stored: nobody ran `loadout auth github`.
      const shared = await readFile(path.join(dirs.dataDir, 'oauth', 'github.json'), 'utf8').catch(() => '{}');
      expect(JSON.parse(shared)).not.toHaveProperty('tokens');
    }
  });

  it('asks a 2026-07-28 client that declared URL-mode elicitation in an input-required result, and finishes the call on its retry', async () => {
    const modern = async (token: string, capabilities = {}): Promise<Client> => {
      const client = await connectModernClient(gateway.url, token, capabilities);
      clients.push(client);
      expect(client.getProtocolEra()).toBe('modern');
      return client;
    };
    const elicited: Array<Record<string, unknown>> = [];
    const signInWhenAsked = (client: Client, user: string): void =>
      client.setRequestHandler('elicitation/create', async ({ params }) => {
        elicited.push(params);
        if (params.mode !== 'url') throw new Error(`expected a URL-mode elicitation, got ${JSON.stringify(params)}`);
        expect((await signIn(oauth, user, params.url)).status).toBe(200);
        return { action: 'accept' };
      });

    // Nobody has authorized the server yet (it is not listed): Alice's first call is asked, and answered.
    const alice = await modern(ALICE, { elicitation: { url: {} } });
    signInWhenAsked(alice, 'alice');
    const [aliceUser, aliceToken] = (await callWhoseToken(alice)).split(' ');
    expect(aliceUser).toBe('alice');
    expect(elicited).toEqual([{ mode: 'url', url: expect.stringMatching(/^http/), message: expect.stringContaining("'github'") }]);

    // A 2026-07-28 client that did not declare URL-mode elicitation gets the link as an isError result.
    const bobPlain = await modern(BOB);
    expect(await callWhoseToken(bobPlain)).toMatch(LINK_ERROR);

    // The server is listed now: Bob's call of it is asked the same way, with his own link.
    const bob = await modern(BOB, { elicitation: { url: {} } });
    signInWhenAsked(bob, 'bob');
    const [bobUser, bobToken] = (await callWhoseToken(bob)).split(' ');
    expect(bobUser).toBe('bob');
    expect(bobToken).not.toBe(aliceToken);
    expect(elicited).toHaveLength(2);
    expect(await callWhoseToken(alice)).toBe(`alice ${aliceToken}`);
    expect(await callWhoseToken(bobPlain)).toBe(`bob ${bobToken}`);
    expect(elicited).toHaveLength(2);
    expect(oauth.counts.logins).toBe(2);
  });

  it('has status say the server is per-user and how many principals authorized it, never their tokens', async () => {
    interface Status {
      servers: Array<{ name: string; oauth: unknown; authorizedPrincipals: unknown }>;
    }
    const status = async (): Promise<{ code: number; stdout: string; json: Status }> => {
      const text = await runCli(dirs, ['status'], { env });
      const json = JSON.parse((await runCli(dirs, ['status', '--json'], { env })).stdout) as Status;
      return { code: text.code, stdout: text.stdout, json };
    };
    const before = await status();
    expect(before.json.servers).toEqual([expect.objectContaining({ name: 'github', oauth: 'per-user', authorizedPrincipals: 0 })]);
    expect(before.stdout).toContain('github: per-user credentials, authorized by 0 principals');
    // Nobody's shared login is missing: only the discovery, which waits for someone's token, failed.
    expect(before.stdout).not.toContain('github: needs authorization');

    const alice = await connect(ALICE);
    expect((await signIn(oauth, 'alice', linkOf(await callWhoseToken(alice)))).status).toBe(200);
    const [, aliceToken] = (await callWhoseToken(alice)).split(' ');
    // Bob was given a link but never signed in: he has not authorized it.
    const bob = await connect(BOB);
    expect(await callWhoseToken(bob)).toMatch(LINK_ERROR);
    const after = await status();
    expect(after.json.servers).toEqual([expect.objectContaining({ name: 'github', oauth: 'per-user', authorizedPrincipals: 1 })]);
    expect(after.stdout).toContain('github: per-user credentials, authorized by 1 principal');
    expect(after.code).toBe(0);
    for (const output of [after.stdout, JSON.stringify(after.json)]) expect(output).not.toContain(aliceToken);
  });

  it('renews an expired access token with the refresh token, without a new link, and asks again once it is revoked', async () => {
    const alice = await connect(ALICE);
    expect((await signIn(oauth, 'alice', linkOf(await callWhoseToken(alice)))).status).toBe(200);
    const [, before] = (await callWhoseToken(alice)).split(' ');
    oauth.expireAccessTokens();
    const after = await callWhoseToken(alice);
    expect(after).toMatch(/^alice \S+$/);
    expect(after).not.toBe(`alice ${before}`);
    expect(oauth.counts.refreshes).toBe(1);
    expect(oauth.counts.logins).toBe(1);
    // A refresh token the user revoked: the next call asks for a new authorization, and it works again.
    oauth.revokeRefreshTokens();
    oauth.expireAccessTokens();
    const asked = await callWhoseToken(alice);
    expect(asked).toMatch(LINK_ERROR);
    expect((await signIn(oauth, 'alice', linkOf(asked))).status).toBe(200);
    expect(await callWhoseToken(alice)).toMatch(/^alice \S+$/);
  });

  it('opens a link on a page that says whose sign-in it is and to which server, before the authorization page', async () => {
    const alice = await connect(ALICE);
    const link = new URL(linkOf(await callWhoseToken(alice)));
    // A browser brings no token: the page is served without one, and signs nobody in by itself.
    const opened = await fetch(link);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(opened.headers.get('x-frame-options')).toBe('DENY');
    expect(opened.headers.get('cache-control')).toBe('no-store');
    const page = await openSignInPage(link.href);
    const aliceId = staticTokenPrincipal(ALICE).id;
    expect(page.text).toContain(`Sign in to github for the holder of access token ${aliceId.slice(0, 8)}…`);
    expect(page.text).toContain('If someone sent you this link, close this page');
    expect(page.text).not.toContain(ALICE);
    const authorization = new URL(page.authorizationUrl);
    expect(authorization.origin).toBe(new URL(oauth.mcpUrl).origin);
    expect(authorization.searchParams.get('state')).toBe(link.searchParams.get('state'));
    expect(oauth.counts.logins).toBe(0);
    // A link that is not a pending flow's, or a POST, opens nothing.
    const forged = await fetch(new URL('/oauth/sign-in?state=forged', gateway.url));
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('unknown or has expired');
    expect((await fetch(link, { method: 'POST' })).status).toBe(405);
    // Continuing from the page signs Alice in, as her link said.
    expect((await signIn(oauth, 'alice', link.href)).status).toBe(200);
    expect(await callWhoseToken(alice)).toMatch(/^alice /);
  });

  it('completes a flow only from its own redirect, once', async () => {
    const alice = await connect(ALICE);
    const link = linkOf(await callWhoseToken(alice));
    const forged = await fetch(new URL('/oauth/callback?state=forged&code=stolen', gateway.url));
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('unknown or has expired');
    const page = await signIn(oauth, 'alice', link);
    expect(page.status).toBe(200);
    // The same redirect again (a replayed code) finds no flow: its state was good for one use.
    const replayed = await fetch(page.callback);
    expect(replayed.status).toBe(400);
    // Bob was never asked, and Alice's authorization is not his.
    const bob = await connect(BOB);
    expect(await callWhoseToken(bob)).toMatch(LINK_ERROR);
    expect(await callWhoseToken(alice)).toMatch(/^alice /);
  });
});

const LINK_ERROR = /^ERROR Server 'github' needs your own authorization: open \S+ in a browser/;

describe('per-user downstream credentials with a policy and refused logins', () => {
  let oauth: OAuthFixture;
  let dirs: TempDirs;
  let gateway: ListeningProcess;
  let setup: PerUserSetup;
  let clients: PerUserSetup['clients'];
  beforeEach(async () => {
    const policy = { rules: [{ subjects: [staticTokenPrincipal(ALICE).subject], servers: ['github'] }] };
    setup = await startPerUser({}, policy);
    ({ oauth, dirs, gateway, clients } = setup);
  });
  afterEach(() => stopPerUser(setup));
  const connect = (token: string, elicitation = false): Promise<HttpClient> => connectPerUser(setup, token, elicitation);

  it('never asks a principal the policy does not grant the server to, nor names it to them', async () => {
    const bob = await connect(BOB, true);
    let asked = 0;
    bob.client.setRequestHandler('elicitation/create', () => {
      asked++;
      return { action: 'decline' };
    });
    const answer = await callWhoseToken(bob);
    expect(answer).toMatch(/^ERROR No tool 'github\.whose-token'/);
    expect(answer).not.toMatch(/authoriz|oauth/i);
    expect(asked).toBe(0);
    expect(oauth.counts.registrations).toBe(0);
  });

  it('answers a refused login or a declined elicitation with the link, and stores no token', async () => {
    const alice = await connect(ALICE, true);
    const declined: string[] = [];
    alice.client.setRequestHandler('elicitation/create', ({ params }) => {
      if (params.mode !== 'url') throw new Error('expected a URL-mode elicitation');
      declined.push(params.url);
      return { action: 'decline' as const };
    });
    const first = await callWhoseToken(alice);
    expect(linkOf(first)).toBe(declined[0]);
    oauth.refuseLogins = true;
    const page = await signIn(oauth, 'alice', declined[0]!);
    expect(page.status).toBe(400);
    expect(page.body).toContain("Authorization of 'github' was refused: access_denied");
    const slot = path.join(dirs.dataDir, 'oauth', `github@${staticTokenPrincipal(ALICE).id}.json`);
    expect(JSON.parse(await readFile(slot, 'utf8'))).not.toHaveProperty('tokens');
    oauth.refuseLogins = false;
    // A new call gets a new link (the refused one is spent), and the login after it works.
    alice.client.setRequestHandler('elicitation/create', async ({ params }) => {
      if (params.mode !== 'url') throw new Error('expected a URL-mode elicitation');
      expect(params.url).not.toBe(declined[0]);
      expect((await signIn(oauth, 'alice', params.url)).status).toBe(200);
      return { action: 'accept' };
    });
    expect(await callWhoseToken(alice)).toMatch(/^alice \S+$/);

    // Each authorization is in the audit trail once, as how it ended, under whose it was.
    const authorizations = async () => {
      const run = await runCli(dirs, ['audit', '--json']);
      expect(run.code, run.stderr).toBe(0);
      const { records } = JSON.parse(run.stdout) as {
        records: Array<{ action: string; outcome: string; server?: string; principal: { id: string } | null; detail?: string }>;
      };
      return records.filter((record) => record.action === 'authorization');
    };
    await eventually(async () => (await authorizations()).length === 2, 10_000, 'two authorization records');
    expect(await authorizations()).toEqual([
      expect.objectContaining({
        outcome: 'failed',
        server: 'github',
        principal: expect.objectContaining({ id: staticTokenPrincipal(ALICE).id }),
        detail: expect.stringContaining('access_denied'),
      }),
      expect.objectContaining({
        outcome: 'ok',
        server: 'github',
        principal: expect.objectContaining({ id: staticTokenPrincipal(ALICE).id }),
      }),
    ]);
  });

  it('answers a 2026-07-28 client that declines the input-required elicitation with the link, and stores no token', async () => {
    const alice = await connectModernClient(gateway.url, ALICE, { elicitation: { url: {} } });
    clients.push(alice);
    const declined: string[] = [];
    alice.setRequestHandler('elicitation/create', ({ params }) => {
      if (params.mode !== 'url') throw new Error('expected a URL-mode elicitation');
      declined.push(params.url);
      return { action: 'decline' as const };
    });
    const answer = await callWhoseToken(alice);
    expect(answer).toMatch(LINK_ERROR);
    expect(linkOf(answer)).toBe(declined[0]);
    const slot = path.join(dirs.dataDir, 'oauth', `github@${staticTokenPrincipal(ALICE).id}.json`);
    expect(await readFile(slot, 'utf8').catch(() => '{}')).not.toContain('access_token');
    expect(oauth.counts.logins).toBe(0);
  });
});

describe('per-user downstream credentials over stdio', () => {
  const sandbox = useGatewaySandbox();
  let oauth: OAuthFixture;
  beforeEach(async () => {
    oauth = await startOAuthFixture();
    await writeServersYaml(sandbox.dirs.configDir, { github: { type: 'http', url: oauth.mcpUrl, credentials: 'per-user' } });
  });
  afterEach(async () => {
    await oauth.close();
  });

  it('brings the browser back to a loopback listener of its own, and calls as the configured principal', async () => {
    const gateway = await sandbox.start({ capabilities: { elicitation: { url: {} } } });
    const links: string[] = [];
    const callbacks: string[] = [];
    gateway.client.setRequestHandler('elicitation/create', async ({ params }) => {
      if (params.mode !== 'url') throw new Error(`expected a URL-mode elicitation, got ${JSON.stringify(params)}`);
      links.push(params.url);
      const page = await signIn(oauth, 'me', params.url);
      expect(page.status).toBe(200);
      callbacks.push(page.callback);
      return { action: 'accept' };
    });
    const call = (): Promise<string> =>
      gateway.client
        .callTool({ name: 'call-tool', arguments: { tool: 'github.whose-token', arguments: {} } })
        .then((result) => (result.isError ? `ERROR ${textOf(result)}` : textOf(result)));
    expect(await call()).toMatch(/^me \S+$/);
    expect(await call()).toMatch(/^me \S+$/);
    expect(links).toHaveLength(1);
    // The link opens the listener's own sign-in page (the flow is over: it is spent), and the
    // authorization page sent the browser back to the listener.
    const link = new URL(links[0]!);
    expect(link.hostname).toBe('127.0.0.1');
    expect(link.pathname).toBe('/oauth/sign-in');
    expect((await fetch(link)).status).toBe(400);
    const redirect = new URL(callbacks[0]!);
    expect(redirect.origin).toBe(link.origin);
    expect(redirect.pathname).toBe('/oauth/callback');
    const records = await readdir(path.join(sandbox.dirs.dataDir, 'oauth'));
    expect(records.filter((file) => file.startsWith('github@'))).toEqual(['github@local.json']);
  });

  it('asks a 2026-07-28 client over stdio in an input-required result too', async () => {
    const gateway = await sandbox.start({ versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { url: {} } } });
    expect(gateway.client.getProtocolEra()).toBe('modern');
    let asked = 0;
    gateway.client.setRequestHandler('elicitation/create', async ({ params }) => {
      if (params.mode !== 'url') throw new Error(`expected a URL-mode elicitation, got ${JSON.stringify(params)}`);
      asked++;
      expect((await signIn(oauth, 'me', params.url)).status).toBe(200);
      return { action: 'accept' };
    });
    expect(await callWhoseToken(gateway.client)).toMatch(/^me \S+$/);
    expect(await callWhoseToken(gateway.client)).toMatch(/^me \S+$/);
    expect(asked).toBe(1);
  });
});

describe('per-user downstream credentials in status', () => {
  const sandbox = useGatewaySandbox();

  it("counts a principal's tokens of a server whose url comes from secrets.env, as the gateway expands it", async () => {
    const { dirs } = sandbox;
    // The url's variable is set only in secrets.env: status must expand it as serve does, or no
    // record could be of the server and it would say 0.
    await writeServersYaml(dirs.configDir, { github: { type: 'http', url: '${GITHUB_MCP_URL}', credentials: 'per-user' } });
    await writeFile(path.join(dirs.configDir, 'secrets.env'), 'GITHUB_MCP_URL=https://github.test/mcp\n', { mode: 0o600 });
    const record = { serverUrl: '${GITHUB_MCP_URL}', tokens: { access_token: 'alice-access', token_type: 'Bearer' } };
    await mkdir(path.join(dirs.dataDir, 'oauth'), { recursive: true });
    await writeFile(path.join(dirs.dataDir, 'oauth', 'github@alice.json'), JSON.stringify(record), { mode: 0o600 });
    const run = await runCli(dirs, ['status', '--json']);
    const { servers } = JSON.parse(run.stdout) as { servers: Array<{ name: string; authorizedPrincipals: unknown }> };
    expect(servers).toEqual([expect.objectContaining({ name: 'github', oauth: 'per-user', authorizedPrincipals: 1 })]);
    expect(run.stdout).not.toContain('alice-access');
  });
});
