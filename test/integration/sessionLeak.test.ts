// A client session that fails to connect must leave nothing behind: no session counted, no
// Server or transport kept, over real HTTP (where every initialize makes a new session); and a
// 2026-07-28 request builds one session, however many steps (direct answer, limit, handler) ask it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resolvePaths } from '../../src/config/index.js';
import { createGateway, serveHttp, type Gateway, type HttpGateway } from '../../src/gateway/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectHttp, connectModernClient } from '../helpers/http.js';

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'leak-test', version: '1' } },
});

describe('sessions that fail to connect', () => {
  let dirs: TempDirs;
  let gateway: Gateway | undefined;
  let http: HttpGateway | undefined;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
  });
  afterEach(async () => {
    await http?.close();
    await gateway?.close();
    await dirs.cleanup();
  });

  const serve = async (equip?: string): Promise<HttpGateway> => {
    gateway = await createGateway({
      paths: resolvePaths({ configDir: dirs.configDir, dataDir: dirs.dataDir }),
      logger: silentLogger,
      equip,
    });
    http = await serveHttp(gateway, {
      host: '127.0.0.1',
      port: 0,
      maxBodyBytes: 1024 * 1024,
      sessionIdleMs: 0,
      maxSessions: 10_000,
      logger: silentLogger,
    });
    return http;
  };

  it('counts no session and keeps none when restoring the toolset fails, however often a client tries', async () => {
    const { url } = await serve('missing');
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(initialize(attempt)) });
      expect(response.status).toBe(500);
      expect(await response.text()).toContain("Toolset 'missing' not found");
    }
    expect(gateway!.sessionCount).toBe(0);
    expect(http!.sessionCount).toBe(0);
  });

  it('counts a session once it has connected, and no longer once it has ended', async () => {
    const { url } = await serve();
    const client = await connectHttp(url);
    expect(gateway!.sessionCount).toBe(1);
    expect(http!.sessionCount).toBe(1);
    await client.close();
    expect(http!.sessionCount).toBe(0);
    expect(gateway!.sessionCount).toBe(0);
  });

  it('builds one session for a 2026-07-28 tools/call with limits set, not one per step that asks', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { limits: { calls_per_minute: 100 } });
    const { url } = await serve('all');
    const client = await connectModernClient(url);
    try {
      // Every step of a request (direct answer, limit, handler) asks the gateway for its session.
      const built = vi.spyOn(gateway!, 'requestSession');
      await client.callTool({ name: 'get-active-toolset', arguments: {} });
      expect(built).toHaveBeenCalledTimes(1);
      built.mockClear();
      await client.callTool({ name: 'echo_echo', arguments: { text: 'direct' } });
      expect(built).toHaveBeenCalledTimes(1);
    } finally {
      await client.close();
    }
  });
});
