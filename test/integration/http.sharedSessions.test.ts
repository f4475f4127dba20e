// 2025-era HTTP sessions with a team store: three gateways on one Postgres database (and one data
// dir, where toolsets are saved), behind a round-robin balancer with no stickiness. A session
// started on one replica is served by every one: list, equip and call go to each in turn, its GET
// stream on one hears an equip made through another, a DELETE through one ends it on all, and
// it goes on when the replica it started on is gone. Another caller's session is unknown to them.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { resolvePaths } from '../../src/config/index.js';
import { createGateway, serveHttp, type Gateway, type HttpGateway } from '../../src/gateway/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { openPostgresStore, type TeamStore } from '../../src/store/index.js';
import { eventually, fixture, nodeServer, textOf, trackListChanged, writeServersYaml } from '../helpers/gateway.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { startPostgresServer } from '../helpers/postgresServer.js';
import type { Balancer } from '../helpers/balancer.js';
import { useFleet } from '../helpers/fleet.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

interface Replica {
  gateway: Gateway;
  http: HttpGateway;
  store: TeamStore;
  close(): Promise<void>;
}

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('2025-era HTTP sessions across replicas on one store', () => {
  const databaseUrl = usePostgresDatabase();
  const fleet = useFleet<Replica>({ echo: nodeServer(fixture('echo')) });
  const clients = fleet.clients;

  const startReplica = async (
    options: { sessionIdleMs?: number; tokens?: string[]; maxSessions?: number; storeUrl?: string } = {},
  ): Promise<Replica> => {
    const gateway = await createGateway({
      paths: resolvePaths({ configDir: fleet.dirs.configDir, dataDir: fleet.dirs.dataDir }),
      logger: silentLogger,
    });
    const store = await openPostgresStore({
      url: options.storeUrl ?? databaseUrl(),
      secretKey: TEST_SECRET_KEY,
      bus: { heartbeatMs: 500, reconnectBaseMs: 100, reconnectMaxMs: 1000 },
    });
    const http = await serveHttp(gateway, {
      host: '127.0.0.1',
      port: 0,
      tokens: options.tokens,
      maxBodyBytes: 1024 * 1024,
      sessionIdleMs: options.sessionIdleMs ?? 0,
      maxSessions: options.maxSessions ?? 100,
      store,
      logger: silentLogger,
    });
    let closed: Promise<void> | undefined;
    return {
      gateway,
      http,
      store,
      close: () =>
        (closed ??= (async () => {
          await http.close();
          await gateway.close();
          await store.close();
        })()),
    };
  };

  const startReplicas = (count: number, options?: Parameters<typeof startReplica>[0]): Promise<Balancer> =>
    fleet.start(
      Array.from({ length: count }, () => startReplica(options)),
      (replica) => replica.http.url,
    );

  /** An SDK client of the 2025 era (no version negotiation), through `url`. */
  const legacyClient = async (url: string, token?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    const client = new Client({ name: 'shared-sessions-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    clients.push(client);
    expect(client.getProtocolEra()).toBe('legacy');
    return { client, transport };
  };

  const listedNames = async (client: Client): Promise<string[]> =>
    (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((tool) => tool.name);

  it('serves one session from every replica in turn, announces an equip on the replica holding its GET stream, and ends it everywhere', async () => {
    const balancer = await startReplicas(3);
    const { client, transport } = await legacyClient(balancer.url);
    const sessionId = transport.sessionId!;
    const initializedOn = balancer.served.find((entry) => entry.method === 'initialize')!.upstream;
    // Its next request went to another replica, which knew the session from the store.
    expect(balancer.served.find((entry) => entry.method === 'notifications/initialized')!.upstream).not.toBe(initializedOn);
    expect((await fleet.replicas[0]!.store.sessions.get(sessionId))?.value).toMatchObject({
      principal: 'local',
      clientInfo: { name: 'shared-sessions-test' },
      toolset: null,
    });
    await eventually(() => balancer.served.some((entry) => entry.httpMethod === 'GET'), 10_000, 'the GET stream');
    const streamOn = balancer.served.find((entry) => entry.httpMethod === 'GET')!.upstream;
    const listChanged = trackListChanged(client, false);

    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    expect(built.isError, textOf(built)).toBeFalsy();
    // The equip goes through a replica the GET stream is not on: the notice must cross fleet.replicas.
    balancer.sendNextTo((streamOn + 1) % 3);
    const equipped = await client.callTool({ name: 'equip-toolset', arguments: { name: 'talk' } });
    expect(equipped.isError, textOf(equipped)).toBeFalsy();
    await listChanged.waitFor(1);
    expect((await fleet.replicas[0]!.store.sessions.get(sessionId))?.value.toolset).toBe('talk');

    for (let round = 0; round < 3; round++) expect(await listedNames(client)).toContain('echo_echo');
    for (let round = 0; round < 3; round++) {
      expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `hello ${round}` } }))).toBe(`hello ${round}`);
    }
    const servedBy = (match: (entry: Balancer['served'][number]) => boolean) =>
      new Set(balancer.served.filter(match).map((entry) => entry.upstream));
    expect(servedBy((entry) => entry.method === 'tools/list')).toEqual(new Set([0, 1, 2]));
    expect(servedBy((entry) => entry.name === 'echo_echo')).toEqual(new Set([0, 1, 2]));
    expect(balancer.served.filter((entry) => entry.method === 'initialize')).toHaveLength(1);
    // Every replica holds a copy now.
    expect(fleet.replicas.map((replica) => replica.http.sessionCount)).toEqual([1, 1, 1]);

    // Unequipped through yet another replica: every copy follows, and the stream hears it.
    balancer.sendNextTo((streamOn + 2) % 3);
    await client.callTool({ name: 'unequip-toolset', arguments: {} });
    await listChanged.waitFor(2);
    for (let round = 0; round < 3; round++) expect(await listedNames(client)).not.toContain('echo_echo');

    await transport.terminateSession();
    expect(await fleet.replicas[0]!.store.sessions.get(sessionId)).toBeUndefined();
    await eventually(() => fleet.replicas.every((replica) => replica.http.sessionCount === 0), 10_000, 'every copy to end');
    for (const replica of fleet.replicas) {
      const response = await fetch(replica.http.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'Mcp-Session-Id': sessionId },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(response.status).toBe(404);
    }
  });

  it('answers an equip made through the replica holding the GET stream at once: the re-read may go to any replica', async () => {
    await writeServersYaml(fleet.dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: 600_000 } });
    const balancer = await startReplicas(2);
    const { client } = await legacyClient(balancer.url);
    // The client re-reads the list on every list_changed, as Claude Code does.
    const listChanged = trackListChanged(client, true);
    await eventually(() => balancer.served.some((entry) => entry.httpMethod === 'GET'), 10_000, 'the GET stream');
    const streamOn = balancer.served.find((entry) => entry.httpMethod === 'GET')!.upstream;
    await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    for (let round = 0; round < 2; round++) {
      balancer.sendNextTo(streamOn);
      const equipped = await client.callTool({ name: round ? 'unequip-toolset' : 'equip-toolset', arguments: { name: 'talk' } });
      expect(equipped.isError, textOf(equipped)).toBeFalsy();
      await listChanged.waitFor(round + 1);
    }
    expect(balancer.served.filter((entry) => entry.name === 'equip-toolset').map((entry) => entry.upstream)).toEqual([streamOn]);
  });

  it('goes on serving a session when the replica it started on is gone', async () => {
    const balancer = await startReplicas(2);
    const { client } = await legacyClient(balancer.url);
    const initializedOn = balancer.served.find((entry) => entry.method === 'initialize')!.upstream;
    await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(await listedNames(client)).toContain('echo_echo');

    await fleet.replicas[initializedOn]!.close();
    // The balancer skips the replica that is gone; the other serves the session with its set.
    for (let round = 0; round < 2; round++) {
      expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `still ${round}` } }))).toBe(`still ${round}`);
    }
    expect(await listedNames(client)).toContain('echo_echo');
  });

  it('fails only the call under way when the replica serving it closes; the next call is served by another', async () => {
    await writeServersYaml(fleet.dirs.configDir, { live: nodeServer(fixture('interactive')) });
    const balancer = await startReplicas(2);
    const { client } = await legacyClient(balancer.url);
    await client.callTool({ name: 'build-toolset', arguments: { name: 'slow', tools: ['live.wait', 'live.echo'], equip: true } });
    let reachedServer!: () => void;
    const waiting = new Promise<void>((resolve) => (reachedServer = resolve));
    // The client hears no answer on the stream that is cut below: its own timeout ends the call.
    // Its failure is taken at once, as it may come while the close is awaited.
    const callFailed = expect(
      client.callTool({ name: 'live_wait', arguments: { ms: 60_000 } }, { onprogress: () => reachedServer(), timeout: 3000 }),
    ).rejects.toThrow();
    await waiting;
    const servedBy = balancer.served.findLast((entry) => entry.name === 'live_wait')!.upstream;
    await fleet.replicas[servedBy]!.close();
    await callFailed;
    expect(textOf(await client.callTool({ name: 'live_echo', arguments: { text: 'after' } }))).toBe('after');
    expect(balancer.served.findLast((entry) => entry.name === 'live_echo')!.upstream).toBe(1 - servedBy);
  });

  it("relays a mid-call sampling request from a replica that resumed the session, and the client's answer to it through another", async () => {
    await writeServersYaml(fleet.dirs.configDir, { live: nodeServer(fixture('interactive')) });
    const balancer = await startReplicas(2);
    const transport = new StreamableHTTPClientTransport(new URL(balancer.url));
    const client = new Client({ name: 'sampling-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'resumed' },
      model: 'test',
    }));
    await client.connect(transport);
    clients.push(client);
    const initializedOn = balancer.served.find((entry) => entry.method === 'initialize')!.upstream;
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'asking', tools: ['live.ask'], equip: true } });
    expect(built.isError, textOf(built)).toBeFalsy();
    balancer.sendNextTo(1 - initializedOn);
    const result = await client.callTool({ name: 'live_ask', arguments: { prompt: 'hi' } });
    expect(textOf(result)).toBe('model said: resumed');
    expect(balancer.served.find((entry) => entry.name === 'live_ask')!.upstream).toBe(1 - initializedOn);
    // The client POSTed its answer (a bare JSON-RPC response) to the other replica: it reached the waiting call through the store.
    const answers = balancer.served.filter((entry) => entry.httpMethod === 'POST' && entry.method === undefined);
    expect(answers.map((entry) => entry.upstream)).toEqual([initializedOn]);
    // Taken out of the record by the replica it was delivered to.
    await eventually(
      async () => (await fleet.replicas[0]!.store.sessions.get(transport.sessionId!))?.value.answers === undefined,
      10_000,
      'the answer to be taken',
    );
  });

  it("answers another caller's session exactly as a session that does not exist", async () => {
    await startReplicas(2, { tokens: ['token-a', 'token-b'] });
    const { transport } = await legacyClient(fleet.replicas[0]!.http.url, 'token-a');
    const probe = async (url: string, token: string, sessionId: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${token}`, 'Mcp-Session-Id': sessionId },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      return { status: response.status, body: await response.text() };
    };
    const recorded = fleet.replicas.map((replica) => vi.spyOn(replica.gateway.context.audit, 'record'));
    const unknown = await probe(fleet.replicas[1]!.http.url, 'token-b', '00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    // On the replica holding it and on one that does not: the same answer, and no copy made.
    for (const replica of fleet.replicas) expect(await probe(replica.http.url, 'token-b', transport.sessionId!)).toEqual(unknown);
    expect(fleet.replicas[1]!.http.sessionCount).toBe(0);
    // Each attempt on it is audited where it was refused; the unknown id is not.
    for (const spy of recorded) {
      expect(spy.mock.calls.map(([event]) => event.outcome)).toEqual(['denied-session']);
    }
    // Its own caller is served on either.
    expect((await probe(fleet.replicas[1]!.http.url, 'token-a', transport.sessionId!)).status).toBe(200);
  });

  it('refuses a new session, naming the store, when the store cannot record it, and keeps nothing of it', async () => {
    await startReplicas(1);
    const [replica] = fleet.replicas;
    await replica!.store.close();
    const response = await fetch(replica!.http.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain(`store ${replica!.store.description}`);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(replica!.http.sessionCount).toBe(0);
    expect(replica!.gateway.sessionCount).toBe(0);
  });

  it('drops the copy idle longest at --max-sessions, and that session comes back from its record', async () => {
    await startReplicas(1, { maxSessions: 1 });
    const { url } = fleet.replicas[0]!.http;
    const post = (message: object, sessionId?: string) =>
      fetch(url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...(sessionId && { 'Mcp-Session-Id': sessionId }) },
        body: JSON.stringify(message),
      });
    const open = async (name: string): Promise<string> => {
      const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } };
      const response = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params });
      await response.text();
      return response.headers.get('mcp-session-id')!;
    };
    const list = async (sessionId: string) => {
      const response = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
      return { status: response.status, body: await response.text() };
    };
    const first = await open('first');
    const second = await open('second');
    expect(fleet.replicas[0]!.http.sessionCount).toBe(1);
    // The first one's copy made room; the session itself lives on.
    expect((await list(first)).body).toContain('discover-all-tools');
    expect((await list(second)).body).toContain('discover-all-tools');
    expect(fleet.replicas[0]!.http.sessionCount).toBe(1);
    for (const id of [first, second]) expect(await fleet.replicas[0]!.store.sessions.get(id)).toBeDefined();
    // A session id with no record makes no room: the copy held here stays.
    expect((await list('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect(fleet.replicas[0]!.http.sessionCount).toBe(1);
  });

  it('goes on with Postgres stopped: calls and lists are served from what each replica holds, an equip fails naming the store', async () => {
    // A server of its own: stopping the shared one would fail the other files' tests.
    const server = await startPostgresServer();
    try {
      const balancer = await startReplicas(2, { storeUrl: server.url });
      const { client } = await legacyClient(balancer.url);
      await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
      for (let round = 0; round < 2; round++) expect(await listedNames(client)).toContain('echo_echo');
      expect(fleet.replicas.map((replica) => replica.http.sessionCount)).toEqual([1, 1]);

      await server.stop();
      for (let round = 0; round < 2; round++) {
        expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `down ${round}` } }))).toBe(`down ${round}`);
        expect(await listedNames(client)).toContain('echo_echo');
      }
      const refused = await client.callTool({ name: 'unequip-toolset', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`store ${fleet.replicas[0]!.store.description}`);
      // Not half-applied: the set is as it was, on both fleet.replicas.
      for (let round = 0; round < 2; round++) expect(await listedNames(client)).toContain('echo_echo');

      await server.start();
      await eventually(() => fleet.replicas.every((replica) => replica.store.listening), 20_000, 'the replicas to listen again');
      const unequipped = await client.callTool({ name: 'unequip-toolset', arguments: {} });
      expect(unequipped.isError, textOf(unequipped)).toBeFalsy();
      for (let round = 0; round < 2; round++) expect(await listedNames(client)).not.toContain('echo_echo');
    } finally {
      await Promise.allSettled(fleet.replicas.map((replica) => replica.close()));
      await server.destroy();
    }
  });

  it('deletes the record of a session left idle, and every copy of it', async () => {
    const balancer = await startReplicas(2, { sessionIdleMs: 600 });
    const { transport } = await legacyClient(balancer.url);
    const sessionId = transport.sessionId!;
    // The SDK client holds a GET stream open (the session is in use): end it, as a client gone away would.
    await transport.close();
    await eventually(async () => (await fleet.replicas[0]!.store.sessions.get(sessionId)) === undefined, 20_000, 'the record to go');
    await eventually(() => fleet.replicas.every((replica) => replica.http.sessionCount === 0), 20_000, 'every copy to end');
  });
});
