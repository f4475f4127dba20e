import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { descendantsOf, fixture, isAlive, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { httpHarness, type HttpClient, type HttpHarness } from '../helpers/http.js';

describe('loadout serve --http: sessions', () => {
  let harness: HttpHarness;
  beforeEach(async () => {
    harness = await httpHarness();
    await writeServersYaml(harness.dirs.configDir, { echo: nodeServer(fixture('echo')) });
  });
  afterEach(() => harness.teardown());
  const connect = (): Promise<HttpClient> => harness.connect();

  async function exposedNames(client: HttpClient): Promise<string[]> {
    const { tools } = await client.client.listTools();
    return tools.map((tool) => tool.name).filter((name) => name.startsWith('echo_'));
  }

  it('lets two sessions equip different toolsets, notifying only the session that changed, over one downstream process', async () => {
    const gateway = await harness.start();
    const alice = await connect();
    const bob = await connect();
    expect(alice.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(alice.transport.sessionId).not.toBe(bob.transport.sessionId);

    await alice.client.callTool({ name: 'build-toolset', arguments: { name: 'math', tools: ['echo.add', 'echo.pid'] } });
    await bob.client.callTool({ name: 'build-toolset', arguments: { name: 'words', tools: ['echo.echo', 'echo.pid'] } });
    expect((await alice.client.callTool({ name: 'equip-toolset', arguments: { name: 'math' } })).isError).toBeFalsy();
    await alice.waitForListChanged(1);
    expect(await exposedNames(alice)).toEqual(['echo_add', 'echo_pid']);
    expect(await exposedNames(bob)).toEqual([]);

    expect((await bob.client.callTool({ name: 'equip-toolset', arguments: { name: 'words' } })).isError).toBeFalsy();
    await bob.waitForListChanged(1);
    expect(await exposedNames(bob)).toEqual(['echo_echo', 'echo_pid']);
    expect(await exposedNames(alice)).toEqual(['echo_add', 'echo_pid']);

    // Each session can call its own tools and not the other's.
    expect((await alice.client.callTool({ name: 'echo_add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 });
    expect(textOf(await bob.client.callTool({ name: 'echo_echo', arguments: { text: 'hi' } }))).toBe('hi');
    expect((await bob.client.callTool({ name: 'echo_add', arguments: { a: 1, b: 2 } })).isError).toBe(true);

    // Both sessions reach the same downstream process.
    const alicePid = textOf(await alice.client.callTool({ name: 'echo_pid', arguments: {} }));
    const bobPid = textOf(await bob.client.callTool({ name: 'echo_pid', arguments: {} }));
    expect(alicePid).toBe(bobPid);
    expect(await descendantsOf(gateway.pid)).toEqual([Number(alicePid)]);

    // Unequipping in one session leaves the other alone.
    await alice.client.callTool({ name: 'unequip-toolset', arguments: {} });
    await alice.waitForListChanged(2);
    expect(await exposedNames(alice)).toEqual([]);
    expect(await exposedNames(bob)).toEqual(['echo_echo', 'echo_pid']);
    expect(alice.listChangedCount()).toBe(2);
    expect(bob.listChangedCount()).toBe(1);
  });

  it('answers an equip at once to a session with no notification stream open, which could not hear the change', async () => {
    // Long enough that an equip waiting for a re-read the client was never told to make would time the test out.
    await writeServersYaml(harness.dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: 600_000 } });
    const { url } = await harness.start();
    const post = (message: unknown, sessionId?: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(sessionId && { 'Mcp-Session-Id': sessionId }),
        },
        body: JSON.stringify(message),
      });
    const opened = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'no-stream', version: '1' } },
    });
    const sessionId = opened.headers.get('mcp-session-id')!;
    await opened.text();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).text();
    const equipped = await post(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } },
      },
      sessionId,
    );
    expect(await equipped.text()).toContain('echo_echo');
  });

  it('starts each new session with the toolset most recently equipped by any session', async () => {
    await harness.start();
    const first = await connect();
    await first.client.callTool({ name: 'build-toolset', arguments: { name: 'words', tools: ['echo.echo'], equip: true } });
    const second = await connect();
    expect(await exposedNames(second)).toEqual(['echo_echo']);
    expect(second.listChangedCount()).toBe(0);
  });

  it('tells an HTTP client why its session could not start when the --equip toolset does not exist', async () => {
    await harness.start(['--equip', 'nosuch']);
    await expect(harness.connect()).rejects.toThrow(/nosuch/);
  });

  it('ends a session on DELETE: its id then answers 404, other sessions keep working', async () => {
    const gateway = await harness.start();
    const leaving = await connect();
    const staying = await connect();
    const sessionId = leaving.transport.sessionId!;
    await leaving.transport.terminateSession();
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(404);
    expect((await staying.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('ends the session idle longest when a new one would pass --max-sessions, and refuses one while every session has a call open', async () => {
    await writeServersYaml(harness.dirs.configDir, { echo: nodeServer(fixture('echo')), slow: nodeServer(fixture('slow')) });
    const gateway = await harness.start(['--max-sessions', '2']);
    const post = (message: unknown, sessionId?: string) =>
      fetch(gateway.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}),
        },
        body: JSON.stringify(message),
      });
    const first = await connect();
    const second = await connect();
    // The first session was active least recently once the second has listed its tools.
    expect((await second.client.listTools()).tools.length).toBeGreaterThan(0);
    const third = await connect();
    expect((await post({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }, first.transport.sessionId)).status).toBe(404);
    expect((await second.client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await third.client.listTools()).tools.length).toBeGreaterThan(0);

    // Both sessions in the middle of a call (each has sent progress): a new client is refused, and no call is cut off.
    const running = [second, third].map((client) => {
      let started!: () => void;
      const progressed = new Promise<void>((resolve) => (started = resolve));
      const call = client.client.callTool(
        { name: 'call-tool', arguments: { tool: 'slow.sleep', arguments: { ms: 2000 } } },
        {
          onprogress: () => started(),
        },
      );
      return { progressed, call };
    });
    await Promise.all(running.map(({ progressed }) => progressed));
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const refused = await post(initialize);
    expect(refused.status).toBe(503);
    expect(await refused.text()).toMatch(/--max-sessions/);
    for (const result of await Promise.all(running.map(({ call }) => call))) expect(result.isError).toBeFalsy();
  });

  it('expires a session with no request open after --session-idle-minutes, but not one holding its notification stream', async () => {
    const gateway = await harness.start(['--session-idle-minutes', '0.01']);
    const listening = await connect();
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const started = await fetch(gateway.url, { method: 'POST', headers, body: JSON.stringify(initialize) });
    await started.text();
    const sessionId = started.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    // Each probe is itself activity, so probe rarely: expiry must happen between two probes.
    let status = 0;
    for (let attempt = 0; attempt < 10 && status !== 404; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      status = (await fetch(gateway.url, { method: 'POST', headers: { ...headers, 'Mcp-Session-Id': sessionId }, body: list })).status;
    }
    expect(status).toBe(404);
    expect((await listening.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('ends every session and downstream process on SIGTERM', async () => {
    const gateway = await harness.start();
    const client = await connect();
    await client.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.pid', arguments: {} } });
    const children = await descendantsOf(gateway.pid);
    expect(children).toHaveLength(1);
    await gateway.close('SIGTERM');
    for (const child of children) expect(await isAlive(child)).toBe(false);
  });
});
