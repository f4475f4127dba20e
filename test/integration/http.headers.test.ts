// The 2026-07-28 HTTP headers (SEP-2243) and 2025-11-25 SSE polling (SEP-1699) through loadout,
// over real HTTP. Received: a call of an equipped tool whose server annotated a parameter
// `x-mcp-header` is refused (400, -32020) when its Mcp-Param-* header is missing, disagrees, or is
// bad Base64. Sent: loadout mirrors the argument to a 2026-07-28 server over HTTP, with the
// server's own tool name in Mcp-Name, and leaves out the server's tool whose annotation is invalid.
// SSE: a 2025 session's POST stream opens with a priming event (an id, empty data, `retry`), and a
// client that lost the stream gets the call's answer by a GET with Last-Event-ID.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, fixture, makeTempDirs, nodeServer, startGateway, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { MCP_HEADERS, RAW_INITIALIZE, spawnListening, startHttpGateway, type ListeningProcess } from '../helpers/http.js';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

// A raw 2026-07-28 tools/call of `name` with `args`, its standard headers right and `headers` beside them.
function modernCall(url: string, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': name, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args, _meta: ENVELOPE } }),
  });
}

// The events of an SSE body as they arrive: id, retry and data of each.
interface SseEvent {
  id?: string;
  retry?: string;
  data: string;
}

async function* sseEvents(response: Response): AsyncGenerator<SseEvent, undefined, undefined> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(':');
        const text = rest.join(':').replace(/^ /, '');
        if (field === 'id') event.id = text;
        else if (field === 'retry') event.retry = text;
        else if (field === 'data') event.data += text;
      }
      yield event;
    }
  }
}

describe('SEP-2243 headers of calls loadout receives', () => {
  let dirs: TempDirs;
  let gateway: ListeningProcess;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { test: { command: process.execPath, args: [fixture('contentServer'), '--modern'] } });
    gateway = await startHttpGateway(dirs, ['--equip', 'all']);
  });
  afterAll(async () => {
    await gateway?.close();
    await dirs.cleanup();
  });

  it('keeps the annotation and refuses a call whose Mcp-Param header is missing, disagrees or is bad Base64', async () => {
    const listed = async () => {
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } }),
      });
      const { tools } = ((await response.json()) as { result: { tools: Array<{ name: string; inputSchema: unknown }> } }).result;
      return tools.find((tool) => tool.name === 'test_region_header');
    };
    await eventually(async () => (await listed()) !== undefined, 20_000, 'the fixture discovered');
    expect((await listed())?.inputSchema).toMatchObject({
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
    });

    interface Answer {
      result?: { content: unknown };
      error?: { code: number; message: string };
    }
    const answered = async (response: Response) => ({ status: response.status, body: (await response.json()) as Answer });
    const region = { region: 'eu-west' };
    const plain = await answered(await modernCall(gateway.url, 'test_region_header', region, { 'Mcp-Param-Region': 'eu-west' }));
    expect(plain.status).toBe(200);
    expect(plain.body.result?.content).toEqual([{ type: 'text', text: 'region eu-west' }]);
    const base64 = `=?base64?${Buffer.from('eu-west').toString('base64')}?=`;
    expect((await modernCall(gateway.url, 'test_region_header', region, { 'mcp-param-region': base64 })).status).toBe(200);
    // A null value needs no header.
    expect((await modernCall(gateway.url, 'test_region_header', { region: null })).status).not.toBe(400);

    const wrong: Array<Record<string, string>> = [{}, { 'Mcp-Param-Region': 'us-east' }, { 'Mcp-Param-Region': '=?base64?ZXUtd2VzdA?=' }];
    // Mcp-Name is checked against loadout's own name of the tool, not the server's.
    const serverName = await answered(await modernCall(gateway.url, 'test_region_header', region, { 'Mcp-Name': 'region_header' }));
    expect([serverName.status, serverName.body.error?.code]).toEqual([400, -32020]);
    for (const headers of wrong) {
      const refused = await answered(await modernCall(gateway.url, 'test_region_header', region, headers));
      expect(refused.status, JSON.stringify(headers)).toBe(400);
      expect(refused.body.error?.code).toBe(-32020);
      expect(refused.body.error?.message).toMatch(/Mcp-Param-Region/);
    }
  });
});

describe('SEP-2243 headers of calls loadout sends to a 2026-07-28 server over HTTP', () => {
  let dirs: TempDirs;
  let web: ListeningProcess;
  let logFile: string;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    logFile = path.join(dirs.root, 'era-server.jsonl');
    web = await spawnListening(
      process.execPath,
      [fixture('eraServer'), '--http', '--era', 'modern', '--header-tools', '--log', logFile],
      /^(http:\S+)/m,
    );
    await writeServersYaml(dirs.configDir, { geo: { type: 'http', url: web.url } });
  });
  afterAll(async () => {
    await web?.close('SIGKILL');
    await dirs.cleanup();
  });

  it("mirrors the argument with the server's own tool name, and leaves out a tool whose annotation is invalid", async () => {
    const gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
    try {
      const names = async () => (await gateway.client.listTools()).tools.map((tool) => tool.name);
      await eventually(async () => (await names()).includes('geo_regional'), 20_000, 'the server discovered');
      expect(await names()).not.toContain('geo_bad_header');
      expect(gateway.stderr()).toMatch(/tool left out: invalid x-mcp-header/);

      const result = await gateway.client.callTool({ name: 'geo_regional', arguments: { region: 'zürich' } });
      expect(result.content).toEqual([{ type: 'text', text: 'region zürich' }]);
      // call-tool reaches it by its catalog id (not as an equipped tool), mirrored all the same.
      const viaCallTool = await gateway.client.callTool({
        name: 'call-tool',
        arguments: { tool: 'geo.regional', arguments: { region: 'eu' } },
      });
      expect(viaCallTool.content).toEqual([{ type: 'text', text: 'region eu' }]);
      const calls = (await readFile(logFile, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { method: string | null; name?: string; params?: Record<string, string> })
        .filter((line) => line.method === 'tools/call');
      expect(calls).toMatchObject([
        { name: 'regional', params: { 'mcp-param-region': `=?base64?${Buffer.from('zürich').toString('base64')}?=` } },
        { name: 'regional', params: { 'mcp-param-region': 'eu' } },
      ]);
    } finally {
      await gateway.close();
    }
  });
});

describe('SSE polling of a 2025-11-25 session (SEP-1699)', () => {
  let dirs: TempDirs;
  let gateway: ListeningProcess;
  let session: Record<string, string>;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { test: nodeServer(fixture('contentServer')) });
    gateway = await startHttpGateway(dirs, ['--equip', 'all']);
    const opened = await fetch(gateway.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      // 2025-11-25 or later: an older client gets no priming event.
      body: JSON.stringify({ ...RAW_INITIALIZE, params: { ...RAW_INITIALIZE.params, protocolVersion: '2025-11-25' } }),
    });
    await opened.text();
    session = { 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await fetch(gateway.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await dirs.cleanup();
  });

  const post = (id: number, name: string, signal?: AbortSignal) =>
    fetch(gateway.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...session },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }),
      signal,
    });

  it('opens a POST stream with a priming event that gives an id and the retry', async () => {
    const events = sseEvents(await post(2, 'test_simple_text'));
    const priming = (await events.next()).value!;
    expect(priming).toMatchObject({ data: '', retry: '1000' });
    expect(priming.id).toBeTruthy();
    const answer = (await events.next()).value!;
    expect(JSON.parse(answer.data)).toMatchObject({ id: 2, result: { content: [{ type: 'text' }] } });
  });

  it('gives the answer of a call whose stream broke to a GET with Last-Event-ID', async () => {
    const abort = new AbortController();
    const events = sseEvents(await post(3, 'test_reconnection', abort.signal));
    const { id } = (await events.next()).value!;
    // The client loses its stream before the answer (the call takes 100 ms); until loadout has seen
    // it go, the stream is still connected there (409).
    abort.abort();
    let resumed: Response | undefined;
    await eventually(
      async () => {
        resumed = await fetch(gateway.url, { headers: { Accept: 'text/event-stream', ...session, 'last-event-id': id! } });
        if (resumed.status === 409) await resumed.body?.cancel();
        return resumed.status !== 409;
      },
      10_000,
      'the lost stream resumed',
    );
    expect(resumed!.status).toBe(200);
    for await (const event of sseEvents(resumed!)) {
      if (!event.data) continue;
      expect(JSON.parse(event.data)).toMatchObject({ id: 3, result: { content: [{ type: 'text', text: 'Reconnection test completed' }] } });
      break;
    }
    // An id this session never gave is refused, not answered with nothing.
    const unknown = await fetch(gateway.url, { headers: { Accept: 'text/event-stream', ...session, 'last-event-id': 'nope' } });
    expect(unknown.status).toBe(400);
  });
});
