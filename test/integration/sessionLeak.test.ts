// A client session that fails to connect must leave nothing behind: no session counted, no
// Server or transport kept, over real HTTP (where every initialize makes a new session).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/config/index.js';
import { createGateway, serveHttp, type Gateway, type HttpGateway } from '../../src/gateway/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectHttp } from '../helpers/http.js';

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
});
