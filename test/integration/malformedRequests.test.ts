// Every request with an id gets a JSON-RPC answer, even one the SDK cannot parse (it would drop
// it, and the client would wait for its timeout): -32600 Invalid Request or -32602 Invalid params,
// naming the field. Notifications and responses get none. Over real stdio and real HTTP, where a
// 2026-07-28 request's own fields (a retry's requestState, a listen filter) are checked too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, makeTempDirs, nodeServer, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { startRawGateway, type RawGateway } from '../helpers/rawStdio.js';

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const PARSE_ERROR = -32700;
const deepArray = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;

/** A malformed request, the code it must be answered with, the id of the answer and what the message names. */
const MALFORMED: Array<{ request: Record<string, unknown>; code: number; id: string | null; names: string }> = [
  {
    request: { jsonrpc: '2.0', id: 'array-params', method: 'tools/list', params: [] },
    code: INVALID_PARAMS,
    id: 'array-params',
    names: 'params must be an object',
  },
  {
    request: { jsonrpc: '2.0', id: 'string-params', method: 'ping', params: 'x' },
    code: INVALID_PARAMS,
    id: 'string-params',
    names: 'params must be an object',
  },
  {
    request: { jsonrpc: '2.0', id: 'null-params', method: 'tools/list', params: null },
    code: INVALID_PARAMS,
    id: 'null-params',
    names: 'params must be an object',
  },
  {
    request: { jsonrpc: '2.0', id: 'call-array', method: 'tools/call', params: ['echo'] },
    code: INVALID_PARAMS,
    id: 'call-array',
    names: 'params must be an object',
  },
  {
    request: { jsonrpc: '2.0', id: 'extra-field', method: 'ping', extra: true },
    code: INVALID_REQUEST,
    id: 'extra-field',
    names: "unknown field 'extra'",
  },
  {
    request: { jsonrpc: '2.0', id: 'meta', method: 'tools/list', params: { _meta: 'x' } },
    code: INVALID_PARAMS,
    id: 'meta',
    names: 'params._meta must be an object',
  },
  {
    request: { jsonrpc: '2.0', id: 'token', method: 'tools/list', params: { _meta: { progressToken: { a: 1 } } } },
    code: INVALID_PARAMS,
    id: 'token',
    names: 'params._meta.progressToken',
  },
  {
    request: { jsonrpc: '2.0', id: 'method-number', method: 7 },
    code: INVALID_REQUEST,
    id: 'method-number',
    names: 'method must be a string',
  },
  { request: { jsonrpc: '2.0', id: 'no-method' }, code: INVALID_REQUEST, id: 'no-method', names: 'method must be a string' },
  { request: { jsonrpc: '2.0', id: 1.5, method: 'ping' }, code: INVALID_REQUEST, id: null, names: 'id must be a string or an integer' },
];

/** Malformed, but not requests: nothing may answer them. */
const UNANSWERED: unknown[] = [
  { jsonrpc: '2.0', method: 'notifications/whatever', params: [] },
  { jsonrpc: '2.0', method: 'notifications/initialized', extra: 1 },
  { jsonrpc: '2.0', id: 'a-response', result: {}, extra: 1 },
  { jsonrpc: '2.0', id: 'an-error', error: { code: 1, message: 'x' } },
];

let dirs: TempDirs;
beforeAll(async () => {
  dirs = await makeTempDirs();
  await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
});
afterAll(() => dirs.cleanup());

describe('malformed requests over stdio', () => {
  let gateway: RawGateway;
  beforeAll(async () => {
    gateway = await startRawGateway(dirs, ['--equip', 'all']);
  });
  afterAll(() => gateway.close());

  it('answers each with the right code and its id, naming what is wrong, and keeps serving', async () => {
    for (const { request } of MALFORMED) gateway.send(request);
    for (const message of UNANSWERED) gateway.send(message);
    gateway.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect((await gateway.answer('after')).result).toEqual({});
    for (const { code, id, names } of MALFORMED) {
      const answer = await gateway.answer(id);
      expect(answer, JSON.stringify(answer)).toMatchObject({
        jsonrpc: '2.0',
        id,
        error: { code, message: expect.stringContaining(names) },
      });
    }
    const answeredIds = gateway.messages().map((message) => message.id);
    expect(answeredIds).not.toContain('a-response');
    expect(answeredIds).not.toContain('an-error');
    // One answer per request: the handshake, the malformed ones, and the ping.
    expect(gateway.messages().filter((message) => message.method === undefined)).toHaveLength(MALFORMED.length + 2);
  });

  it('answers a line nested 1,000,000 deep with a parse error carrying its id, and serves the next call', async () => {
    gateway.send(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"echo_echo","arguments":{"text":${deepArray}}}}`);
    gateway.send({
      jsonrpc: '2.0',
      id: 'after-deep',
      method: 'tools/call',
      params: { name: 'echo_echo', arguments: { text: 'still here' } },
    });
    expect(await gateway.answer('deep', 60_000)).toMatchObject({
      jsonrpc: '2.0',
      id: 'deep',
      error: { code: PARSE_ERROR, message: expect.stringContaining('1000 levels') },
    });
    expect(textOf((await gateway.answer('after-deep', 60_000)).result)).toBe('still here');
  });

  it('answers a line nested 1,000,000 deep with id null when its id is out of sight', async () => {
    const before = gateway.messages().length;
    gateway.send(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo_echo","arguments":{"text":${deepArray}}},"id":"x","extra":1}`,
    );
    gateway.send({ jsonrpc: '2.0', id: 'ping-after-deep', method: 'ping' });
    expect((await gateway.answer('ping-after-deep', 60_000)).result).toEqual({});
    // The refusal is written as its line is read, before the ping after it is answered.
    expect(
      gateway
        .messages()
        .slice(before)
        .filter((message) => message.id === null),
    ).toEqual([{ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: expect.stringContaining('1000 levels') as string } }]);
  });
});

describe('malformed requests over HTTP', () => {
  let gateway: ListeningProcess;
  let headers: Record<string, string>;
  beforeAll(async () => {
    gateway = await startHttpGateway(dirs);
    headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const init = await post({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    headers = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    await init.text();
  });
  afterAll(() => gateway.close());

  const post = (body: unknown): Promise<Response> => fetch(gateway.url, { method: 'POST', headers, body: JSON.stringify(body) });

  it('answers each with the right code and its id, naming what is wrong', async () => {
    for (const { request, code, id, names } of MALFORMED) {
      const response = await post(request);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id, error: { code, message: expect.stringContaining(names) } });
    }
  });

  it('answers every request of a batch holding a malformed one, and still serves the session', async () => {
    const response = await post([
      { jsonrpc: '2.0', id: 'fine', method: 'ping' },
      { jsonrpc: '2.0', id: 'bad', method: 'ping', params: [1] },
      { jsonrpc: '2.0', method: 'notifications/whatever' },
    ]);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual([
      {
        jsonrpc: '2.0',
        id: 'fine',
        error: { code: INVALID_REQUEST, message: expect.stringContaining('message 2 of the batch is malformed') },
      },
      { jsonrpc: '2.0', id: 'bad', error: { code: INVALID_PARAMS, message: expect.stringContaining('params must be an object') } },
    ]);
    const ping = await post({ jsonrpc: '2.0', id: 'later', method: 'ping' });
    expect(ping.status).toBe(200);
    expect(await ping.text()).toContain('"id":"later"');
  });
});

describe('a body nested too deep to handle over HTTP', () => {
  let gateway: ListeningProcess;
  beforeAll(async () => {
    gateway = await startHttpGateway(dirs);
  });
  afterAll(() => gateway.close());

  const DEPTH = 200_000;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  it.each([
    ['a bare array', `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`],
    [
      "a request's arguments",
      `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"x","arguments":{"a":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}}}`,
    ],
  ])('answers %s 200,000 deep with 400, and keeps serving', async (_title, body) => {
    const response = await fetch(gateway.url, { method: 'POST', headers, body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringContaining('deep') },
    });
    const init = await fetch(gateway.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(init.status).toBe(200);
    await init.text();
  });
});

describe('malformed 2026-07-28 requests over HTTP', () => {
  let gateway: ListeningProcess;
  beforeAll(async () => {
    gateway = await startHttpGateway(dirs);
  });
  afterAll(() => gateway.close());

  const ENVELOPE = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  // A sessionless request as a 2026-07-28 client sends it: the envelope, and the headers that repeat it.
  const post = (method: string, params: Record<string, unknown>, endpoint = gateway.url): Promise<Response> =>
    fetch(endpoint, {
      method: 'POST',
      signal: AbortSignal.timeout(10_000),
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': method,
        ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params: { ...params, _meta: ENVELOPE } }),
    });

  it('answers a retry whose requestState is not a string with -32602 naming requestState, by any way of calling', async () => {
    const retries: Array<[string, Record<string, unknown>]> = [
      // An equipped tool (the all toolset's endpoint lists every tool), and the same tool through call-tool.
      [gateway.url.replace(/\/mcp$/, '/mcp/toolsets/all'), { name: 'echo_echo', arguments: { text: 'x' }, requestState: 42 }],
      [
        gateway.url,
        { name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'x' } }, requestState: { a: 1 }, inputResponses: {} },
      ],
    ];
    for (const [endpoint, params] of retries) {
      const response = await post('tools/call', params, endpoint);
      expect(await response.json(), JSON.stringify(params)).toMatchObject({
        jsonrpc: '2.0',
        id: 'tools/call',
        error: { code: INVALID_PARAMS, message: expect.stringContaining('requestState') },
      });
    }
  });

  it('answers a subscriptions/listen with a malformed filter with -32602 naming the filter, at once', async () => {
    const filters: unknown[] = [
      'all',
      { toolsListChanged: 'yes' },
      { resourceSubscriptions: 'note://state' },
      { resourceSubscriptions: [5] },
      undefined,
    ];
    for (const notifications of filters) {
      const response = await post('subscriptions/listen', notifications === undefined ? {} : { notifications });
      expect(await response.json(), JSON.stringify(notifications)).toMatchObject({
        jsonrpc: '2.0',
        id: 'subscriptions/listen',
        error: { code: INVALID_PARAMS, message: expect.stringContaining("'notifications'") },
      });
    }
    // The gateway is still serving.
    const ping = await post('tools/call', { name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'still here' } } });
    expect(await ping.json()).toMatchObject({ result: { content: [{ text: 'still here' }] } });
  });
});
