// loadout as a client of modern (2026-07-28) servers: a 2025 client reaches the modern-only era
// fixture through loadout, over stdio and over HTTP — discovery, calls with progress and a
// cancellation, an elicitation asked mid-call (input_required, fulfilled by the client and
// retried), a prompt, a resource subscription and a tools list change over the listen stream —
// and the era found is kept in the catalog cache, so the next start sends no probe.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  eventually,
  fixture,
  makeTempDirs,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { freePort, spawnListening, type ListeningProcess } from '../helpers/http.js';
import { collectNotifications, progressBeforeResult, type NotificationLog } from '../helpers/notifications.js';
import { eraFixtureLog } from '../helpers/eraFixtureLog.js';

async function cachedEra(dirs: TempDirs, server: string): Promise<unknown> {
  const catalog = JSON.parse(await readFile(path.join(dirs.dataDir, 'catalog.json'), 'utf8')) as {
    servers: Record<string, { era?: unknown }>;
  };
  return catalog.servers[server]?.era;
}

function startEraServer(args: string[], logFile: string): Promise<ListeningProcess> {
  return spawnListening(process.execPath, [fixture('eraServer'), '--http', '--log', logFile, ...args], /^(http:\S+)/m);
}

describe.each(['stdio', 'http'] as const)('a 2025 client through loadout to a modern-only server over %s', (mode) => {
  let dirs: TempDirs;
  let logFile: string;
  let web: ListeningProcess | undefined;
  let gateway: GatewayProcess;
  let notifications: NotificationLog;

  const start = async (): Promise<GatewayProcess> => {
    const started = await startGateway({ dirs, args: ['--equip', 'all'], capabilities: { elicitation: {} } });
    started.client.setRequestHandler('elicitation/create', (request) => ({
      action: 'accept',
      content: { answer: `yes to "${request.params.message}"` },
    }));
    return started;
  };

  beforeAll(async () => {
    dirs = await makeTempDirs();
    logFile = path.join(dirs.root, 'era-server.jsonl');
    const modern =
      mode === 'stdio'
        ? { command: process.execPath, args: [fixture('eraServer'), '--era', 'modern', '--log', logFile] }
        : { type: 'http', url: (web = await startEraServer(['--era', 'modern'], logFile)).url };
    await writeServersYaml(dirs.configDir, { modern: { ...modern, always_on: true } });
    gateway = await start();
    notifications = collectNotifications(gateway.client);
    await eventually(
      async () => (await gateway.client.listTools()).tools.some((tool) => tool.name === 'modern_echo'),
      20_000,
      'the modern server discovered',
    );
  });
  afterAll(async () => {
    await gateway?.close().catch(() => undefined);
    await web?.close('SIGKILL');
    await dirs.cleanup();
  });

  it('lists its tools, prompts, resources and templates, and calls a tool', async () => {
    const { client } = gateway;
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['modern_echo', 'modern_count', 'modern_ask', 'modern_touch', 'modern_grow']));
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('modern_greet');
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toContain('note://state');
    expect((await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate)).toContain('note://item/{id}');
    const echoed = await client.callTool({ name: 'modern_echo', arguments: { text: 'across eras' } });
    // What a 2025 server would send: no resultType, and no _meta naming the 2026-07-28 server.
    expect(echoed).toEqual({ content: [{ type: 'text', text: 'across eras' }] });
    const viaMetaTool = await client.callTool({ name: 'call-tool', arguments: { tool: 'modern.echo', arguments: { text: 'again' } } });
    expect(viaMetaTool).toEqual({ content: [{ type: 'text', text: 'again' }] });
    expect(await client.getPrompt({ name: 'modern_greet', arguments: { name: 'Ada' } })).toMatchObject({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }],
    });
    expect((await client.readResource({ uri: 'note://item/7' })).contents).toEqual([
      { uri: 'note://item/7', mimeType: 'text/plain', text: 'item 7' },
    ]);
  });

  it('passes progress back, and cancels a call downstream', async () => {
    const { client } = gateway;
    const counted = await client.callTool({ name: 'modern_count', arguments: { n: 3 } }, { onprogress: () => undefined });
    expect(textOf(counted)).toBe('counted 3');
    // Every step, before the result, read at the transport (see tapReceived).
    expect(progressBeforeResult(gateway.received, 'counted 3')).toEqual([1, 2, 3]);

    const abort = new AbortController();
    const long = client.callTool(
      { name: 'modern_count', arguments: { n: 1000 } },
      { signal: abort.signal, onprogress: () => abort.abort() },
    );
    await expect(long).rejects.toThrow();
    await eventually(
      async () => Number(textOf(await client.callTool({ name: 'modern_cancelled', arguments: {} }))) >= 1,
      10_000,
      'the cancellation to reach the server',
    );
  });

  it("fulfils the server's input_required through the client's elicitation and retries with its requestState", async () => {
    const answered = await gateway.client.callTool({ name: 'modern_ask', arguments: { question: 'Proceed?' } });
    // The fixture checks the requestState came back byte for byte, or answers isError.
    expect(answered).toMatchObject({ content: [{ type: 'text', text: 'answer: yes to "Proceed?"' }] });
    expect(answered.isError).toBeFalsy();
  });

  it('delivers a resource update of a subscribed resource, and a tools list change', async () => {
    const { client } = gateway;
    await client.subscribeResource({ uri: 'note://state' });
    await client.callTool({ name: 'modern_touch', arguments: { text: 'changed' } });
    await notifications.waitFor(
      (n) => n.method === 'notifications/resources/updated' && n.params?.uri === 'note://state',
      10_000,
      'resources/updated',
    );
    expect((await client.readResource({ uri: 'note://state' })).contents[0]).toMatchObject({ text: 'changed' });

    const before = gateway.listChangedCount();
    expect(textOf(await client.callTool({ name: 'modern_grow', arguments: {} }))).toBe('grown_8');
    await gateway.waitForListChanged(before + 1);
    await eventually(async () => (await client.listTools()).tools.some((tool) => tool.name === 'modern_grown_8'), 10_000, 'the new tool');
  });

  it('sends the log level the client set in each request, and passes the log messages back', async () => {
    await gateway.client.setLoggingLevel('info');
    expect(textOf(await gateway.client.callTool({ name: 'modern_log', arguments: { text: 'hello log' } }))).toBe('logged');
    const logged = await notifications.waitFor(
      (n) => n.method === 'notifications/message' && n.params?.data === 'hello log',
      10_000,
      'the log message',
    );
    expect(logged.params).toMatchObject({ level: 'info', logger: 'modern' });
  });

  it('keeps the era in the catalog cache, so the next start sends no probe', async () => {
    expect(await cachedEra(dirs, 'modern')).toMatchObject({ era: 'modern', discover: { supportedVersions: expect.any(Array) } });
    const status = JSON.parse((await runCli(dirs, ['status', '--json'])).stdout) as { servers: Array<{ name: string; era: unknown }> };
    expect(status.servers.find((server) => server.name === 'modern')?.era).toEqual({ era: 'modern', checkedAt: expect.any(String) });
    await gateway.close();
    const before = (await eraFixtureLog(logFile)).length;
    gateway = await start();
    expect(textOf(await gateway.client.callTool({ name: 'modern_echo', arguments: { text: 'again' } }))).toBe('again');
    const since = (await eraFixtureLog(logFile)).slice(before);
    expect(since.map((message) => message.method)).toContain('tools/call');
    expect(since.map((message) => message.method)).not.toContain('server/discover');
    expect(since.map((message) => message.method)).not.toContain('initialize');
  });
});

describe('era negotiation with other servers', () => {
  let dirs: TempDirs;
  let logFile: string;
  const gateways: GatewayProcess[] = [];
  const listening: ListeningProcess[] = [];
  const start = async (): Promise<GatewayProcess> => {
    const started = await startGateway({ dirs, args: ['--equip', 'all'], capabilities: { elicitation: {} } });
    started.client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { answer: 'legacy yes' } }));
    gateways.push(started);
    return started;
  };
  const eraServer = (...args: string[]) => ({ command: process.execPath, args: [fixture('eraServer'), '--log', logFile, ...args] });
  const untilListed = (gateway: GatewayProcess, tool: string) =>
    eventually(async () => (await gateway.client.listTools()).tools.some((listed) => listed.name === tool), 20_000, `${tool} listed`);

  beforeEach(async () => {
    dirs = await makeTempDirs();
    logFile = path.join(dirs.root, 'era-server.jsonl');
  });
  afterEach(async () => {
    await Promise.allSettled(gateways.splice(0).map((gateway) => gateway.close()));
    await Promise.allSettled(listening.splice(0).map((process) => process.close('SIGKILL')));
    await dirs.cleanup();
  });

  it('speaks 2025 to a legacy-only server, relaying its elicitation, and starts it without a probe next time', async () => {
    await writeServersYaml(dirs.configDir, { old: eraServer('--era', 'legacy') });
    let gateway = await start();
    await untilListed(gateway, 'old_ask');
    expect(textOf(await gateway.client.callTool({ name: 'old_ask', arguments: { question: 'Sure?' } }))).toBe('answer: legacy yes');
    expect(await cachedEra(dirs, 'old')).toEqual({ era: 'legacy', checkedAt: expect.any(String) });
    await gateway.close();

    const before = (await eraFixtureLog(logFile)).length;
    gateway = await start();
    expect(textOf(await gateway.client.callTool({ name: 'old_echo', arguments: { text: 'still here' } }))).toBe('still here');
    const since = (await eraFixtureLog(logFile)).slice(before).map((message) => message.method);
    expect(since).toContain('initialize');
    expect(since).not.toContain('server/discover');

    // `loadout refresh` asks again: a legacy server may have been upgraded since.
    const { checkedAt } = (await cachedEra(dirs, 'old')) as { checkedAt: string };
    const beforeRefresh = (await eraFixtureLog(logFile)).length;
    expect((await runCli(dirs, ['refresh', 'old'])).code).toBe(0);
    expect((await eraFixtureLog(logFile)).slice(beforeRefresh).map((message) => message.method)).toContain('server/discover');
    expect(await cachedEra(dirs, 'old')).toEqual({ era: 'legacy', checkedAt: expect.not.stringMatching(checkedAt) });
  });

  it('starts a stdio server that exits on the probe again in the 2025 era', async () => {
    await writeServersYaml(dirs.configDir, { brittle: eraServer('--era', 'legacy', '--exit-before-initialize') });
    const gateway = await start();
    await untilListed(gateway, 'brittle_echo');
    expect(textOf(await gateway.client.callTool({ name: 'brittle_echo', arguments: { text: 'up' } }))).toBe('up');
    const log = await eraFixtureLog(logFile);
    const probed = log.find((message) => message.method === 'server/discover');
    const initialized = log.find((message) => message.method === 'initialize');
    expect(probed).toBeDefined();
    expect(initialized).toBeDefined();
    expect(initialized!.pid).not.toBe(probed!.pid);
    expect(await cachedEra(dirs, 'brittle')).toMatchObject({ era: 'legacy' });
  });

  it('never sends a call twice when a server remembered as modern dies during the first call after its start', async () => {
    // Without the changed-tools check before a first call, nothing but the call itself need reach the server first.
    await writeServersYaml(
      dirs.configDir,
      { fragile: eraServer('--era', 'modern', '--no-listen') },
      { gateway: { block_changed_tools: false } },
    );
    let gateway = await start();
    await untilListed(gateway, 'fragile_exit');
    expect(await cachedEra(dirs, 'fragile')).toMatchObject({ era: 'modern' });
    await gateway.close();

    // No listen stream confirms the remembered era at this start: the call is the first answer it would get.
    gateway = await start();
    const before = (await eraFixtureLog(logFile)).length;
    const died = await gateway.client.callTool({ name: 'fragile_exit', arguments: {} });
    expect(died.isError).toBe(true);
    expect(textOf(died)).toContain('era fixture: exiting in the middle of a call');
    const calls = (await eraFixtureLog(logFile)).slice(before).filter((message) => message.method === 'tools/call');
    expect(calls).toHaveLength(1);
    // The next call starts it again, and it still answers in the modern era.
    expect(textOf(await gateway.client.callTool({ name: 'fragile_echo', arguments: { text: 'again' } }))).toBe('again');
    expect(await cachedEra(dirs, 'fragile')).toMatchObject({ era: 'modern' });
  });

  it('reaches a modern-only stdio server that starts too slowly to answer the first probe in time', async () => {
    await writeServersYaml(dirs.configDir, { slow: eraServer('--era', 'modern', '--delay-start', '6000') });
    const gateway = await start();
    await eventually(async () => (await gateway.client.listTools()).tools.some((tool) => tool.name === 'slow_echo'), 40_000, 'slow_echo');
    expect(textOf(await gateway.client.callTool({ name: 'slow_echo', arguments: { text: 'late but modern' } }))).toBe('late but modern');
    expect(await cachedEra(dirs, 'slow')).toMatchObject({ era: 'modern' });
  }, 60_000);

  it('answers a call whose input the client cannot give with an error result that says what is missing', async () => {
    await writeServersYaml(dirs.configDir, { modern: eraServer('--era', 'modern') });
    const gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
    gateways.push(gateway);
    await untilListed(gateway, 'modern_ask');
    const result = await gateway.client.callTool({ name: 'modern_ask', arguments: { question: 'Anyone?' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/modern\.ask.*did not declare the elicitation capability/);
  });

  it("relays a server's roots/list asked during a call to the client that made it, whichever its era", async () => {
    await writeServersYaml(dirs.configDir, { modern: eraServer('--era', 'modern') });
    const roots = [{ uri: 'file:///work/a' }, { uri: 'file:///work/b', name: 'b' }];
    for (const era of ['2025', '2026-07-28'] as const) {
      const gateway = await startGateway({
        dirs,
        args: ['--equip', 'all'],
        capabilities: { roots: {} },
        ...(era === '2026-07-28' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
      });
      gateways.push(gateway);
      expect(gateway.client.getProtocolEra()).toBe(era === '2025' ? 'legacy' : 'modern');
      gateway.client.setRequestHandler('roots/list', () => ({ roots }));
      await untilListed(gateway, 'modern_roots');
      const result = await gateway.client.callTool({ name: 'modern_roots', arguments: {} });
      expect(textOf(result), era).toBe('file:///work/a file:///work/b');
    }

    const rootless = await startGateway({ dirs, args: ['--equip', 'all'] });
    gateways.push(rootless);
    await untilListed(rootless, 'modern_roots');
    // Told the client declared no roots, the server refuses the call itself, naming what is missing;
    // a JSON-RPC error the client sees as such whether the tool is equipped or reached through call-tool.
    for (const call of [
      { name: 'modern_roots', arguments: {} },
      { name: 'call-tool', arguments: { tool: 'modern.roots', arguments: {} } },
    ]) {
      await expect(rootless.client.callTool(call), call.name).rejects.toThrow(
        /modern\.roots.*'roots' \(roots\/list\).*do not declare the required capability/,
      );
    }
  });

  it('probes again at once when a server remembered as modern refuses the modern era', async () => {
    await writeServersYaml(dirs.configDir, { shifty: eraServer('--era', 'modern') });
    let gateway = await start();
    await untilListed(gateway, 'shifty_echo');
    expect(await cachedEra(dirs, 'shifty')).toMatchObject({ era: 'modern' });
    await gateway.close();

    // The same server, downgraded: it answers only 2025's initialize now.
    await writeServersYaml(dirs.configDir, { shifty: eraServer('--era', 'legacy') });
    gateway = await start();
    expect(textOf(await gateway.client.callTool({ name: 'shifty_echo', arguments: { text: 'downgraded' } }))).toBe('downgraded');
    await eventually(async () => ((await cachedEra(dirs, 'shifty')) as { era?: string }).era === 'legacy', 10_000, 'the legacy verdict');
  });

  it('listens again when a modern HTTP server cuts its listen stream, and hears its list changes', async () => {
    listening.push(await startEraServer(['--era', 'modern'], logFile));
    await writeServersYaml(dirs.configDir, { web: { type: 'http', url: listening[0]!.url, always_on: true } });
    const gateway = await start();
    await untilListed(gateway, 'web_echo');
    const listens = async () => (await eraFixtureLog(logFile)).filter((message) => message.method === 'subscriptions/listen').length;
    await eventually(async () => (await listens()) === 1, 15_000, 'the listen stream');

    // As a proxy ending long-lived responses does: the same server, its stream cut.
    expect((await fetch(new URL('/hangup', listening[0]!.url))).status).toBe(204);
    await eventually(async () => (await listens()) === 2, 15_000, 'the listen stream opened again');
    const before = gateway.listChangedCount();
    await gateway.client.callTool({ name: 'web_grow', arguments: {} });
    await gateway.waitForListChanged(before + 1);
  });

  it('keeps calling a modern HTTP server restarted on its port, with no new handshake, and listens again', async () => {
    const port = await freePort();
    listening.push(await startEraServer(['--era', 'modern', '--port', String(port)], logFile));
    await writeServersYaml(dirs.configDir, { web: { type: 'http', url: listening[0]!.url, always_on: true } });
    const gateway = await start();
    await untilListed(gateway, 'web_echo');
    expect(textOf(await gateway.client.callTool({ name: 'web_echo', arguments: { text: 'before' } }))).toBe('before');

    await listening.shift()!.close('SIGKILL');
    const restartedLog = path.join(dirs.root, 'restarted.jsonl');
    listening.push(await startEraServer(['--era', 'modern', '--port', String(port)], restartedLog));
    expect(textOf(await gateway.client.callTool({ name: 'web_echo', arguments: { text: 'after' } }))).toBe('after');
    // The listen stream that dropped with the old process is opened on the new one.
    await eventually(
      async () => (await eraFixtureLog(restartedLog)).some((message) => message.method === 'subscriptions/listen'),
      15_000,
      'a new listen stream',
    );
    const methods = (await eraFixtureLog(restartedLog)).map((message) => message.method);
    expect(methods).not.toContain('server/discover');
    // A legacy client's POSTs carry no Mcp-Method header: none were sent (no initialize).
    expect(methods).not.toContain(null);
    const before = gateway.listChangedCount();
    await gateway.client.callTool({ name: 'web_grow', arguments: {} });
    await gateway.waitForListChanged(before + 1);
  });
});
