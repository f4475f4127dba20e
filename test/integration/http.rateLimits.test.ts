// Rate limits over HTTP: a tools/call the limits refuse is answered `429 Too Many Requests` with
// `Retry-After` (seconds) and the JSON-RPC error stdio gets (-32029, `data.retryAfterSeconds`), in
// both eras and whichever way the call is served (answered in front of the SDK handler, by the
// handler, or by a 2025 session's event stream); a call let through is counted once, and each
// refusal has one audit record.
import { SdkHttpError } from '@modelcontextprotocol/client';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, makeTempDirs, nodeServer, textOf, type TempDirs } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { connectHttp, connectModernClient, startHttpGateway } from '../helpers/http.js';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs();
  await writeFile(
    path.join(dirs.configDir, 'servers.yaml'),
    stringify({ servers: { echo: nodeServer(fixture('echo')) }, limits: { server_calls_per_minute: 2 } }),
  );
});
afterEach(() => dirs.cleanup());

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { id?: unknown; result?: unknown; error?: { code: number; message: string; data: { retryAfterSeconds: number } } };
}

// POST one tools/call as a 2026-07-28 client would (with `progress`, a call the SDK handler serves),
// or in the 2025 session `sessionId`.
async function post(
  url: string,
  token: string,
  call: { id: number; name: string; arguments: Record<string, unknown>; progress?: boolean; sessionId?: string },
): Promise<Answer> {
  const modern = call.sessionId === undefined;
  const meta = modern ? { _meta: { ...ENVELOPE, ...(call.progress ? { progressToken: 'p' } : {}) } } : {};
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(modern
        ? { 'mcp-method': 'tools/call', 'mcp-name': call.name, 'mcp-protocol-version': '2026-07-28' }
        : { 'mcp-session-id': call.sessionId!, 'mcp-protocol-version': '2025-11-25' }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: call.id,
      method: 'tools/call',
      params: { name: call.name, arguments: call.arguments, ...meta },
    }),
  });
  const text = await response.text();
  // A 2025 session answers a call it lets through on an event stream.
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: JSON.parse(json) as Answer['body'] };
}

function expectOverLimit(answer: Answer, id: number): void {
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({
    id,
    error: {
      code: -32029,
      message: expect.stringMatching(/at most 2 calls of server 'echo' a minute for each caller; retry in \d+ s/) as string,
      data: { limit: 'server_calls_per_minute', server: 'echo', callsPerMinute: 2 },
    },
  });
  const seconds = answer.body.error!.data.retryAfterSeconds;
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(answer.retryAfter).toBe(String(seconds));
}

async function expectSdkOverLimit(call: Promise<unknown>): Promise<void> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SdkHttpError);
  expect((error as SdkHttpError).status).toBe(429);
  expect(JSON.parse((error as SdkHttpError).data.text as string)).toMatchObject({ error: { code: -32029, data: { server: 'echo' } } });
}

describe('a call over a rate limit over HTTP', () => {
  it('is answered 429 with Retry-After and the JSON-RPC error, in both eras, counted once and recorded once', async () => {
    const gateway = await startHttpGateway(dirs, ['--equip', 'all', '--token', 'modern-token', '--token', 'legacy-token']);
    let refused = 0;
    try {
      // 2026-07-28: one call the handler serves and one answered in front of it make the limit's
      // two: the first is not counted twice, or the second would be refused.
      const modern = (id: number, name = 'echo_echo', progress = false) =>
        post(gateway.url, 'modern-token', {
          id,
          name,
          progress,
          arguments: name === 'call-tool' ? { tool: 'echo.echo', arguments: { text: 'x' } } : { text: 'x' },
        });
      expect(await modern(1, 'echo_echo', true)).toMatchObject({ status: 200, retryAfter: null, body: { result: {} } });
      expect(await modern(2)).toMatchObject({ status: 200, body: { result: {} } });
      expectOverLimit(await modern(3), 3);
      expectOverLimit(await modern(4, 'echo_echo', true), 4);
      expectOverLimit(await modern(5, 'call-tool'), 5);
      refused += 3;
      const modernClient = await connectModernClient(gateway.url, 'modern-token');
      await expectSdkOverLimit(modernClient.callTool({ name: 'echo_echo', arguments: { text: 'x' } }));
      refused += 1;
      // A meta-tool reaches no server: it is not over a server's limit.
      expect((await modernClient.callTool({ name: 'get-active-toolset', arguments: {} })).isError).toBeFalsy();
      await modernClient.close();

      // A 2025 session, another principal: its own two calls, then 429 for the SDK client and a raw POST alike.
      const legacy = await connectHttp(gateway.url, { token: 'legacy-token' });
      expect(textOf(await legacy.client.callTool({ name: 'echo_echo', arguments: { text: 'one' } }))).toBe('one');
      expect(
        textOf(await legacy.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'two' } } })),
      ).toBe('two');
      await expectSdkOverLimit(legacy.client.callTool({ name: 'echo_echo', arguments: { text: 'three' } }));
      const sessionId = legacy.transport.sessionId!;
      expectOverLimit(await post(gateway.url, 'legacy-token', { id: 90, name: 'echo_echo', arguments: { text: 'x' }, sessionId }), 90);
      expectOverLimit(
        await post(gateway.url, 'legacy-token', { id: 91, name: 'call-tool', arguments: { tool: 'echo.echo' }, sessionId }),
        91,
      );
      refused += 3;
      // The session goes on: a meta-tool is still answered in it.
      expect((await legacy.client.callTool({ name: 'get-active-toolset', arguments: {} })).isError).toBeFalsy();
      await legacy.close();
    } finally {
      await gateway.close();
    }
    const run = await runCli(dirs, ['audit', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const records = (JSON.parse(run.stdout) as { records: Array<{ outcome: string; server?: string; request_id?: unknown }> }).records;
    const limited = records.filter((record) => record.outcome === 'rate-limited');
    expect(limited).toHaveLength(refused);
    expect(limited.every((record) => record.server === 'echo')).toBe(true);
    expect(records.filter((record) => record.outcome === 'ok' && record.server === 'echo')).toHaveLength(4);
  });
});
