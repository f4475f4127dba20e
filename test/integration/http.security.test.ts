import { spawnSync } from 'node:child_process';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, makeTempDirs, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectHttp, startHttpGateway, type ListeningProcess } from '../helpers/http.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('loadout serve --http: secure defaults', () => {
  let dirs: TempDirs;
  let gateway: ListeningProcess | undefined;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, {});
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await dirs.cleanup();
  });

  function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(gateway!.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  it('binds 127.0.0.1 by default and answers /healthz without a session', async () => {
    gateway = await startHttpGateway(dirs);
    expect(new URL(gateway.url).hostname).toBe('127.0.0.1');
    const response = await fetch(new URL('/healthz', gateway.url));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('requires the bearer token on /mcp when one is set (401), but not on /healthz', async () => {
    gateway = await startHttpGateway(dirs, ['--token', 's3cret']);
    expect((await post(INITIALIZE)).status).toBe(401);
    expect((await post(INITIALIZE, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(INITIALIZE, { Authorization: 'Bearer s3cret-but-longer' })).status).toBe(401);
    expect((await fetch(new URL('/healthz', gateway.url))).status).toBe(200);
    const client = await connectHttp(gateway.url, { token: 's3cret' });
    expect((await client.client.listTools()).tools.map((tool) => tool.name)).toContain('equip-toolset');
    await client.close();
  });

  it('takes the token from LOADOUT_TOKEN', async () => {
    gateway = await startHttpGateway(dirs, [], { LOADOUT_TOKEN: 'from-env' });
    expect((await post(INITIALIZE)).status).toBe(401);
    expect((await post(INITIALIZE, { Authorization: 'Bearer from-env' })).status).toBe(200);
  });

  it('refuses a foreign Origin (403) and accepts its own origin, no origin, and --allow-origin', async () => {
    gateway = await startHttpGateway(dirs, ['--allow-origin', 'http://localhost:6274']);
    const port = new URL(gateway.url).port;
    const foreign = await post(INITIALIZE, { Origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { message: string } }).error.message).toContain('evil.example');
    expect((await post(INITIALIZE, { Origin: `http://localhost:${port}` })).status).toBe(200);
    expect((await post(INITIALIZE, { Origin: 'http://localhost:6274' })).status).toBe(200);
    expect((await post(INITIALIZE)).status).toBe(200);
  });

  it('refuses a Host header naming another host (DNS rebinding) with 403', async () => {
    gateway = await startHttpGateway(dirs);
    const port = new URL(gateway.url).port;
    expect(await rawPost(gateway.url, { Host: `rebound.example:${port}` }, [JSON.stringify(INITIALIZE)])).toBe(403);
    expect(await rawPost(gateway.url, { Host: `localhost:${port}` }, [JSON.stringify(INITIALIZE)])).toBe(200);
  });

  it('answers 404 for an unknown session, 400 for a missing session id, 400 for malformed JSON', async () => {
    gateway = await startHttpGateway(dirs);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    expect((await post(list, { 'Mcp-Session-Id': '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    expect((await post(list)).status).toBe(400);
    expect((await fetch(gateway.url, { method: 'GET', headers: { Accept: 'text/event-stream' } })).status).toBe(400);
    expect((await post('{"jsonrpc": "2.0", ')).status).toBe(400);
    expect((await fetch(new URL('/elsewhere', gateway.url))).status).toBe(404);
  });

  it('refuses a request body over the limit with 413 and keeps serving', async () => {
    gateway = await startHttpGateway(dirs, ['--max-body-mb', '1']);
    const huge = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(2 * 1024 * 1024) } };
    expect((await post(huge)).status).toBe(413);
    // Without a Content-Length (chunked), the limit applies while reading.
    const chunk = 'x'.repeat(256 * 1024);
    expect(await rawPost(gateway.url, {}, ['{"padding": "', ...Array<string>(8).fill(chunk), '"}'])).toBe(413);
    expect((await post(INITIALIZE)).status).toBe(200);
  });

  it('answers an 8 MB body with 413 every time, with or without a Content-Length, never a reset', async () => {
    gateway = await startHttpGateway(dirs);
    const body = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(8 * 1024 * 1024) } });
    for (let attempt = 0; attempt < 8; attempt++) expect((await post(body)).status).toBe(413);
    const chunk = 'x'.repeat(1024 * 1024);
    for (let attempt = 0; attempt < 4; attempt++)
      expect(await rawPost(gateway.url, {}, ['{"padding": "', ...Array<string>(8).fill(chunk), '"}'])).toBe(413);
    expect((await post(INITIALIZE)).status).toBe(200);
  });

  it('closes the connection after any answer sent before the body was read, so a keep-alive client opens a new one', async () => {
    gateway = await startHttpGateway(dirs, ['--max-body-mb', '1', '--token', 's3cret']);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const declared = { ...MCP_HEADERS, 'Content-Length': String(100 * 1024 * 1024) };
    const authorized = { Authorization: 'Bearer s3cret' };
    try {
      // A body declared too large (413), and refusals by the guard (401, 403) and by method (405),
      // each with a declared 100 MB body of which only a few bytes come.
      for (const [headers, method, status] of [
        [{ ...declared, ...authorized }, 'POST', 413],
        [declared, 'POST', 401],
        [{ ...declared, ...authorized, Origin: 'http://evil.example' }, 'POST', 403],
        [{ ...declared, ...authorized }, 'PUT', 405],
      ] as const) {
        const refused = await requestOn(agent, gateway.url, method, headers, '{"jsonrpc": "2.0", ');
        expect(refused.status).toBe(status);
        expect(refused.headers.connection).toBe('close');
        const next = await requestOn(agent, gateway.url, 'POST', { ...MCP_HEADERS, ...authorized }, JSON.stringify(INITIALIZE));
        expect(next.status).toBe(200);
        expect(next.headers.connection).toBe('keep-alive');
      }
    } finally {
      agent.destroy();
    }
  });

  it('refuses to bind a non-loopback host without a token, with one line and a non-zero exit', () => {
    const result = spawnSync(
      process.execPath,
      [CLI, 'serve', '--http', '--host', '0.0.0.0', '--port', '0', '--config', dirs.configDir, '--data', dirs.dataDir],
      {
        encoding: 'utf8',
        timeout: 15_000,
      },
    );
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--token');
  });

  it('rejects malformed serve options with a non-zero exit', () => {
    for (const args of [
      ['--port', 'seventy'],
      ['--port', '70000'],
      ['--max-body-mb', '0'],
      ['--session-idle-minutes', '-1'],
    ]) {
      const result = spawnSync(process.execPath, [CLI, 'serve', '--http', ...args, '--config', dirs.configDir, '--data', dirs.dataDir], {
        encoding: 'utf8',
        timeout: 15_000,
      });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain(args[0]);
    }
  });
});

// A POST with node:http, so Host can be set and the body sent in chunks (no Content-Length).
function rawPost(url: string, headers: Record<string, string>, chunks: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

// One request through `agent`; `headers` may declare a Content-Length the body does not fill.
function requestOn(
  agent: Agent,
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
