// Per-user credentials with real OIDC principals, end to end: an OpenID provider on loopback
// (oidc-provider) signs two people in to loadout (an SDK client each, through the whole OAuth flow:
// the 401, the metadata, the login, the token), and both call the same GitHub-like server behind,
// which needs its own authorization server's token (a second fixture on loopback). Each is asked for
// their own authorization (one over a 2025 session, one as a 2026-07-28 client), and from then on
// each call arrives with the token of the OIDC subject who made it.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOAuthFixture } from '../fixtures/oauthServer.js';
import { startOidcProvider } from '../fixtures/oidcProvider.js';
import { runCli } from '../helpers/cli.js';
import { textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { startHttpGateway } from '../helpers/http.js';
import { BrowserOAuthClient, openSignInPage } from '../helpers/oauthBrowser.js';
import { usePerTest } from '../helpers/perTest.js';

describe('per-user downstream credentials for OIDC principals', () => {
  const sandbox = useGatewaySandbox();
  const idp = usePerTest(startOidcProvider);
  const github = usePerTest(startOAuthFixture);
  // loadout over HTTP, signing people in at the provider, with GitHub behind it per user.
  const gateway = usePerTest(async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { github: { type: 'http', url: github().mcpUrl, credentials: 'per-user' } },
      { auth: { issuer: idp().issuer, scopes: ['mcp:tools'] } },
    );
    return startHttpGateway(sandbox.dirs);
  });
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  });

  /** `user` signs in to loadout at the OpenID provider; their client declares URL-mode elicitation. */
  async function signInToLoadout(user: string, era: '2025' | '2026-07-28'): Promise<Client> {
    idp().user = user;
    const oauth = new BrowserOAuthClient();
    const options = {
      capabilities: { elicitation: { url: {} } },
      ...(era === '2026-07-28' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    };
    const first = new Client({ name: `oidc-${user}`, version: '1' }, options);
    await expect(first.connect(new StreamableHTTPClientTransport(new URL(gateway().url), { authProvider: oauth }))).rejects.toThrow(
      UnauthorizedError,
    );
    const transport = new StreamableHTTPClientTransport(new URL(gateway().url), { authProvider: oauth });
    await transport.finishAuth(oauth.callback!);
    const client = new Client({ name: `oidc-${user}`, version: '1' }, options);
    await client.connect(transport);
    clients.push(client);
    expect(client.getProtocolEra()).toBe(era === '2025' ? 'legacy' : 'modern');
    // Asked to authorize GitHub, the person signs in there as themselves and the browser comes back to loadout.
    client.setRequestHandler('elicitation/create', async ({ params }) => {
      if (params.mode !== 'url') throw new Error(`expected a URL-mode elicitation, got ${JSON.stringify(params)}`);
      github().signedInUser = `${user}@github`;
      const signInPage = await openSignInPage(params.url);
      // The page names the OIDC subject whose loadout sign-in it is, before anyone signs in.
      expect(signInPage.text).toContain(`Sign in to github for ${user} (`);
      const authorize = await fetch(signInPage.authorizationUrl, { redirect: 'manual' });
      const page = await fetch(authorize.headers.get('location')!);
      expect(page.status).toBe(200);
      return { action: 'accept' };
    });
    return client;
  }

  const whoseToken = async (client: Client): Promise<string> => {
    const result = await client.callTool({ name: 'call-tool', arguments: { tool: 'github.whose-token', arguments: {} } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return textOf(result);
  };

  it('sends each OIDC subject’s calls with their own downstream token', async () => {
    const alice = await signInToLoadout('alice', '2025');
    const bob = await signInToLoadout('bob', '2026-07-28');
    expect(idp().logins).toBe(2);

    const [aliceUser, aliceToken] = (await whoseToken(alice)).split(' ');
    const [bobUser, bobToken] = (await whoseToken(bob)).split(' ');
    expect([aliceUser, bobUser]).toEqual(['alice@github', 'bob@github']);
    expect(aliceToken).not.toBe(bobToken);
    for (let round = 0; round < 2; round++) {
      expect(await whoseToken(bob)).toBe(`bob@github ${bobToken}`);
      expect(await whoseToken(alice)).toBe(`alice@github ${aliceToken}`);
    }
    expect(github().counts.logins).toBe(2);

    // One slot per OIDC principal, named by its id (a hash), never by the subject.
    const slots = (await readdir(path.join(sandbox.dirs.dataDir, 'oauth'))).filter((file) => file.startsWith('github@'));
    expect(slots).toHaveLength(2);
    expect(slots.join(' ')).not.toMatch(/alice|bob/);
    const status = JSON.parse((await runCli(sandbox.dirs, ['status', '--json'])).stdout) as {
      servers: Array<{ authorizedPrincipals: unknown }>;
    };
    expect(status.servers[0]?.authorizedPrincipals).toBe(2);
  });
});
