// The four era pairings through loadout, on real stdio and real HTTP: a client in the 2026-07-28
// era or the 2025 era (a v2 SDK Client, negotiating or not) in front of the era fixture served
// modern-only or legacy-only. Each pairing covers discovery, an equip heard as a tools
// list_changed (on subscriptions/listen for a modern client), a call with progress and one
// cancelled, an elicitation in the middle of a call, a prompt, a resource and a subscription; and
// the fixture's log of what it received shows which era loadout spoke to it.
import { Client, StreamableHTTPClientTransport, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, eventually, fixture, makeTempDirs, textOf, trackListChanged, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { collectNotifications, progressBeforeResult, tapReceived } from '../helpers/notifications.js';
import { eraFixtureLog } from '../helpers/eraFixtureLog.js';
import { rm } from 'node:fs/promises';
import path from 'node:path';

type Era = 'modern' | 'legacy';

const PAIRINGS = (['modern', 'legacy'] as const).flatMap((client) =>
  (['modern', 'legacy'] as const).flatMap((server) => (['stdio', 'http'] as const).map((upstream) => ({ client, server, upstream }))),
);

describe.each(PAIRINGS)('$client client ↔ loadout ($upstream) ↔ $server server', ({ client: clientEra, server: serverEra, upstream }) => {
  let dirs: TempDirs | undefined;
  let http: ListeningProcess | undefined;
  let client: Client | undefined;
  // Every message loadout sent the client, in order, read at the transport.
  let received: readonly JSONRPCMessage[] = [];

  afterEach(async () => {
    await client?.close().catch(() => undefined);
    await http?.close();
    if (dirs) await rm(dirs.root, { recursive: true, force: true });
    client = http = dirs = undefined;
  });

  // Where the fixture logs each message it receives (see eraFixtureLog).
  const fixtureLog = (): string => path.join(dirs!.root, 'era-fixture.jsonl');

  const connect = async (): Promise<Client> => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, {
      era: { command: process.execPath, args: [fixture('eraServer'), '--era', serverEra, '--log', fixtureLog()] },
    });
    const connecting = new Client(
      { name: 'era-matrix', version: '1.0.0' },
      {
        capabilities: { elicitation: { form: {} } },
        ...(clientEra === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
      },
    );
    const loadoutArgs = ['--config', dirs.configDir, '--data', dirs.dataDir, '--log-level', 'info'];
    let transport: Transport;
    if (upstream === 'stdio') {
      transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', ...loadoutArgs], stderr: 'ignore' });
    } else {
      http = await startHttpGateway(dirs);
      transport = new StreamableHTTPClientTransport(new URL(http.url));
    }
    await connecting.connect(transport);
    received = tapReceived(transport);
    client = connecting;
    return connecting;
  };

  it('discovers, equips, forwards progress, cancellation, elicitation, prompts, resources and a subscription', async () => {
    const client = await connect();
    expect(client.getProtocolEra()).toBe(clientEra satisfies Era);
    const listChanged = trackListChanged(client, false);
    const notifications = collectNotifications(client);
    client.setRequestHandler('elicitation/create', (request) => ({
      action: 'accept',
      content: { answer: `yes to ${String(request.params.message)}` },
    }));

    const found = await client.callTool({ name: 'discover-all-tools', arguments: { query: 'era fixture tools' } });
    for (const tool of ['era.echo', 'era.count', 'era.ask', 'era.touch']) expect(textOf(found)).toContain(tool);

    const subscription = clientEra === 'modern' ? await client.listen({ toolsListChanged: true }) : undefined;
    const built = await client.callTool({
      name: 'build-toolset',
      arguments: { name: 'kit', tools: ['era.echo', 'era.count', 'era.cancelled', 'era.ask', 'era.touch'], equip: true },
    });
    expect(built.isError, textOf(built)).toBeFalsy();
    await listChanged.waitFor(1);
    const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' });
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['era_echo', 'era_count', 'era_ask', 'era_touch']));
    expect(textOf(await client.callTool({ name: 'era_echo', arguments: { text: `${clientEra} to ${serverEra}` } }))).toBe(
      `${clientEra} to ${serverEra}`,
    );

    // The era loadout spoke downstream: the envelope on every call for a modern server, initialize
    // and no envelope for a legacy one (whose only modern message may be loadout's probe).
    const heard = await eraFixtureLog(fixtureLog());
    const calls = heard.filter((message) => message.method === 'tools/call');
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(
      calls.every((message) => message.modern === (serverEra === 'modern')),
      JSON.stringify(calls),
    ).toBe(true);
    expect(heard.some((message) => message.method === 'initialize')).toBe(serverEra === 'legacy');

    // Progress, every step before the result (read at the transport: see tapReceived), and a call
    // cancelled part way that the server hears of.
    const counted = await client.callTool({ name: 'era_count', arguments: { n: 3 } }, { onprogress: () => undefined });
    expect(textOf(counted)).toBe('counted 3');
    expect(progressBeforeResult(received, 'counted 3')).toEqual([1, 2, 3]);
    const abort = new AbortController();
    const cancelled = client.callTool(
      { name: 'era_count', arguments: { n: 500, delayMs: 20 } },
      { signal: abort.signal, onprogress: () => abort.abort('enough') },
    );
    await expect(cancelled).rejects.toThrow();
    await eventually(async () => textOf(await client.callTool({ name: 'era_cancelled', arguments: {} })) === '1', 10_000, 'the cancel');

    // An elicitation in the middle of a call: server-initiated for a 2025 peer, input_required for a 2026 one.
    expect(textOf(await client.callTool({ name: 'era_ask', arguments: { question: 'ready?' } }))).toBe('answer: yes to ready?');

    const { prompts } = await client.listPrompts();
    const greet = prompts.find((prompt) => prompt.name.endsWith('greet'));
    expect(greet, JSON.stringify(prompts)).toBeDefined();
    const prompt = await client.getPrompt({ name: greet!.name, arguments: { name: 'Ada' } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'Hello, Ada!' });

    const { resources } = await client.listResources();
    const state = resources.find((resource) => resource.uri.endsWith('note://state'));
    expect(state, JSON.stringify(resources)).toBeDefined();
    expect((await client.readResource({ uri: state!.uri })).contents[0]).toMatchObject({ text: 'initial' });

    const watch =
      clientEra === 'modern'
        ? await client.listen({ resourceSubscriptions: [state!.uri] })
        : (await client.subscribeResource({ uri: state!.uri }), undefined);
    await client.callTool({ name: 'era_touch', arguments: { text: 'touched' } });
    const updated = await notifications.waitFor((n) => n.method === 'notifications/resources/updated', 10_000, 'resources/updated');
    expect(updated.params).toMatchObject({ uri: state!.uri });
    expect((await client.readResource({ uri: state!.uri })).contents[0]).toMatchObject({ text: 'touched' });
    await watch?.close();
    await subscription?.close();
  });
});
