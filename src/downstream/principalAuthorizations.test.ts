// A principal's authorization flows against the OAuth server the test runs on loopback, its
// redirects coming back to the flows' own loopback listener (no HTTP server of loadout's here):
// a link asked for while the principal's tokens are good starts no login, and wipes nothing.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../config/index.js';
import { startOAuthFixture } from '../../test/fixtures/oauthServer.js';
import { openSignInPage } from '../../test/helpers/oauthBrowser.js';
import { usePerTest } from '../../test/helpers/perTest.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { fileOAuthRecords, principalOAuthRecords, type OAuthRecords } from './oauthRecords.js';
import { PrincipalAuthorizations } from './principalAuthorizations.js';

describe('PrincipalAuthorizations', () => {
  const tempDir = useTempDir('loadout-principal-auth-');
  const oauth = usePerTest(startOAuthFixture);
  let records: OAuthRecords;
  let authorizations: PrincipalAuthorizations;
  const authorized: string[] = [];
  beforeEach(() => {
    records = fileOAuthRecords(path.join(tempDir(), 'oauth'));
    const config = ServerConfigSchema.parse({ type: 'http', url: oauth().mcpUrl, credentials: 'per-user' });
    authorizations = new PrincipalAuthorizations({
      records,
      env: {},
      configOf: (server) => (server === 'github' ? config : undefined),
      onAuthorized: (server, principal) => void authorized.push(`${server}@${principal}`),
    });
  });
  afterEach(async () => {
    authorized.length = 0;
    await authorizations.close();
  });

  // Play the browser: sign in as `user` at the link, and follow the redirect back to the listener.
  async function signIn(user: string, link: string): Promise<string> {
    oauth().signedInUser = user;
    const authorize = await fetch((await openSignInPage(link)).authorizationUrl, { redirect: 'manual' });
    expect(authorize.status).toBe(302);
    return (await fetch(authorize.headers.get('location')!)).text();
  }

  it('starts no login for a principal whose tokens the server has not refused, and keeps those tokens', async () => {
    const link = await authorizations.link('github', 'alice');
    expect(link).toBeDefined();
    expect(await signIn('alice', link!.url)).toContain("'github' is authorized");
    await link!.authorized;
    expect(authorized).toEqual(['github@alice']);
    const held = await principalOAuthRecords(records, 'alice').read('github');
    expect(held?.tokens?.access_token).toEqual(expect.any(String));

    // A call that found no authorization before the sign-in finished asks for a link after it.
    expect(await authorizations.link('github', 'alice')).toBeUndefined();
    expect(await principalOAuthRecords(records, 'alice').read('github')).toEqual(held);
    expect(oauth().counts.logins).toBe(1);
    // Another principal still gets a link of their own.
    expect((await authorizations.link('github', 'bob'))?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/sign-in\?state=/);
  });

  it('keeps tokens a sign-in saved after the link was asked for and before its login began', async () => {
    const link = await authorizations.link('github', 'alice');
    await signIn('alice', link!.url);
    await link!.authorized;
    const held = await principalOAuthRecords(records, 'alice').read('github');
    // A link asked for by a call whose read of the record came before that sign-in saved its tokens.
    const readBeforeTheSignIn: OAuthRecords = { ...records, read: () => Promise.resolve(undefined) };
    const late = new PrincipalAuthorizations({
      records: readBeforeTheSignIn,
      env: {},
      configOf: () => ServerConfigSchema.parse({ type: 'http', url: oauth().mcpUrl, credentials: 'per-user' }),
      onAuthorized: () => undefined,
    });
    try {
      expect(await late.link('github', 'alice')).toBeUndefined();
    } finally {
      await late.close();
    }
    expect(await principalOAuthRecords(records, 'alice').read('github')).toMatchObject({ tokens: held!.tokens });
    expect(oauth().counts.logins).toBe(1);
  });

  it("names the link's principal on its sign-in page as text, whatever their name holds", async () => {
    const link = await authorizations.link('github', 'eve', '<b>eve</b> & "co"');
    const html = await (await fetch(link!.url)).text();
    expect(html).toContain('Sign in to github for &lt;b&gt;eve&lt;/b&gt; &amp; &quot;co&quot;');
    expect(html).not.toContain('<b>eve</b>');
    expect((await openSignInPage(link!.url)).text).toContain('Sign in to github for <b>eve</b> & "co"');
  });
});
