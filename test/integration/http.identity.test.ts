// loadout as an OAuth 2.1 resource server: a real OpenID provider on loopback issues JWT access
// tokens for loadout's URL (a resource indicator); an SDK client runs the whole flow against a
// real `loadout serve --http`, and tokens that are wrong in each way are refused with the right status.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, fixture, makeTempDirs, nodeServer, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { BrowserOAuthClient } from '../helpers/oauthBrowser.js';
import { startOidcProvider, type OidcFixture } from '../fixtures/oidcProvider.js';

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('loadout serve --http with an authorization server', () => {
  let dirs: TempDirs;
  let idp: OidcFixture;
  let gateway: ListeningProcess;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    idp = await startOidcProvider();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { auth: { issuer: idp.issuer, scopes: ['mcp:tools'] } });
    gateway = await startHttpGateway(dirs, ['--equip', 'all', '--metrics', '--metrics-port', '0', '--log-level', 'debug']);
  });
  afterEach(async () => {
    await gateway.close();
    await idp.close();
    await dirs.cleanup();
  });

  const post = (token?: string): Promise<Response> =>
    fetch(gateway.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(INITIALIZE),
    });

  it('answers 401 naming its metadata, which names the authorization server', async () => {
    const response = await post();
    expect(response.status).toBe(401);
    const metadataUrl = new URL('/.well-known/oauth-protected-resource/mcp', gateway.url).href;
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    for (const url of [metadataUrl, new URL('/.well-known/oauth-protected-resource', gateway.url).href]) {
      const metadata = await fetch(url);
      expect(metadata.status).toBe(200);
      expect(await metadata.json()).toMatchObject({
        resource: gateway.url,
        authorization_servers: [idp.issuer],
        scopes_supported: ['mcp:tools'],
      });
    }
    expect(gateway.output()).toContain('(access token required)');
    // /metrics names servers, tools and principals: never on the MCP port (it has a listener of its own).
    const metrics = await fetch(new URL('/metrics', gateway.url));
    expect(metrics.status).toBe(404);
    expect(await metrics.text()).not.toContain('mcp_server_operation');
  });

  it('binds beyond loopback with auth: in servers.yaml alone (no --token, no --auth-issuer)', async () => {
    const wide = await startHttpGateway(dirs, ['--host', '0.0.0.0']);
    try {
      expect(wide.output()).toContain('(access token required)');
    } finally {
      await wide.close();
    }
  });

  it('lets an SDK client discover, authorize, get a token and call tools', async () => {
    const oauth = new BrowserOAuthClient();
    const first = new Client({ name: 'identity-test', version: '1' });
    // The first connect meets the 401, finds the metadata, registers and sends the user to log in.
    await expect(first.connect(new StreamableHTTPClientTransport(new URL(gateway.url), { authProvider: oauth }))).rejects.toThrow(
      UnauthorizedError,
    );
    expect(oauth.callback?.get('code')).toBeTruthy();
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url), { authProvider: oauth });
    await transport.finishAuth(oauth.callback!);
    expect(idp.logins).toBe(1);
    const client = new Client({ name: 'identity-test', version: '1' });
    await client.connect(transport);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('echo_echo');
    expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: 'hello' } }))).toBe('hello');
    // No access token (a JWT: base64url JSON, 'eyJ…') reaches loadout's log, even at debug level.
    expect(gateway.output()).not.toMatch(/eyJ[\w-]{10,}/);
    // The token was issued for loadout's own URL, by the resource indicator the SDK sent.
    const [, payload] = oauth.tokens()!.access_token.split('.');
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toMatchObject({ aud: gateway.url, sub: 'alice', iss: idp.issuer });
    await client.close();
  });

  it('accepts a token for its own URL and refuses other audiences, expired, forged, foreign and under-scoped tokens', async () => {
    expect((await post(await idp.clientCredentialsToken(gateway.url, 'mcp:tools'))).status).toBe(200);
    const refusals: Array<[string, string, number, string]> = [
      ['another audience', await idp.clientCredentialsToken('http://127.0.0.1:1/other', 'mcp:tools'), 401, 'invalid_token'],
      [
        'expired',
        await idp.signToken({ sub: 'alice', aud: gateway.url, scope: 'mcp:tools' }, { expiresAtSeconds: 1000 }),
        401,
        'invalid_token',
      ],
      [
        'wrong signature',
        await idp.signToken({ sub: 'alice', aud: gateway.url, scope: 'mcp:tools' }, { stranger: true }),
        401,
        'invalid_token',
      ],
      [
        'another issuer',
        await idp.signToken({ sub: 'alice', aud: gateway.url, scope: 'mcp:tools', iss: 'http://127.0.0.1:1' }),
        401,
        'invalid_token',
      ],
      ['missing scope', await idp.clientCredentialsToken(gateway.url, 'mcp:admin'), 403, 'insufficient_scope'],
      ['not a JWT', 'opaque-token', 401, 'invalid_token'],
    ];
    for (const [what, token, status, error] of refusals) {
      const response = await post(token);
      expect({ what, status: response.status }).toEqual({ what, status });
      expect(response.headers.get('www-authenticate'), what).toContain(`error="${error}"`);
      expect(response.headers.get('www-authenticate'), what).toContain('resource_metadata="');
    }
    const scoped = await post(await idp.clientCredentialsToken(gateway.url, 'mcp:admin'));
    expect(scoped.headers.get('www-authenticate')).toContain('scope="mcp:tools"');
  });

  it('keeps a session to the caller who started it', async () => {
    const alice = await idp.signToken({ sub: 'alice', aud: gateway.url, scope: 'mcp:tools' });
    const bob = await idp.signToken({ sub: 'bob', aud: gateway.url, scope: 'mcp:tools' });
    const started = await post(alice);
    const session = started.headers.get('mcp-session-id')!;
    const list = (token: string): Promise<Response> =>
      fetch(gateway.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${token}`, 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    expect((await list(bob)).status).toBe(403);
    expect((await list(alice)).status).toBe(200);
  });

  it('refuses --token together with an authorization server, naming both', () => {
    const run = spawnSync(
      process.execPath,
      [CLI, 'serve', '--http', '--port', '0', '--config', dirs.configDir, '--data', dirs.dataDir, '--token', 'static'],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('Give either --token or an authorization server');
  });
});
