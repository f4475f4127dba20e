// No value nested deep from a downstream server ends the gateway: an answer 1,000,000 levels deep
// (over stdio or HTTP) costs that call, never the process. (A client's line that deep:
// malformedRequests.test.ts.)
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepAnswer, type FixtureRequest } from '../fixtures/deepAnswers.js';
import { fixture, makeTempDirs, nodeServer, startGateway, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

const DEPTH = 1_000_000;

let dirs: TempDirs;
let httpServer: Server;
beforeAll(async () => {
  dirs = await makeTempDirs();
  // The same answers over streamable HTTP, each POST answered with one JSON body (no session).
  httpServer = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const answer = req.method === 'POST' ? deepAnswer(JSON.parse(body) as FixtureRequest, DEPTH) : undefined;
      if (answer === undefined) return void res.writeHead(req.method === 'POST' ? 202 : 405).end();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  await writeServersYaml(dirs.configDir, {
    echo: nodeServer(fixture('echo')),
    deep: nodeServer(fixture('deepResult')),
    remote: { type: 'http', url },
  });
});
afterAll(async () => {
  await new Promise((resolve) => httpServer.close(resolve));
  await dirs.cleanup();
});

describe('a downstream result nested 1,000,000 deep', () => {
  it('over HTTP fails that call and the gateway keeps serving', async () => {
    const gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
    try {
      // Parsed whole by the SDK's HTTP transport, it reaches the writer toward the client, which answers the call with an error instead.
      await expect(gateway.client.callTool({ name: 'remote_deep', arguments: {} })).rejects.toMatchObject({ code: -32603 });
      const shallow = await gateway.client.callTool({ name: 'remote_shallow', arguments: {} });
      expect(textOf(shallow)).toBe('shallow');
    } finally {
      await gateway.close();
    }
  }, 120_000);

  it('over stdio fails that call and the gateway keeps serving', async () => {
    const gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
    try {
      const deep = await gateway.client.callTool({ name: 'deep_deep', arguments: {} });
      expect(deep.isError).toBe(true);
      expect(textOf(deep)).toContain('nested deeper than 1000 levels');
      const shallow = await gateway.client.callTool({ name: 'deep_shallow', arguments: {} });
      expect(textOf(shallow)).toBe('shallow');
      const echo = await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'alive' } });
      expect(textOf(echo)).toBe('alive');
    } finally {
      await gateway.close();
    }
  }, 120_000);
});
