// Modern (2026-07-28) HTTP needs no session: two `loadout serve --http` processes on one config
// and data dir, behind a relay that sends each request to the other process in turn, serve one
// negotiating SDK client through discovery, build, equip, a subscriptions/listen stream and calls,
// with no stickiness. The equipped set belongs to the caller's bearer token (its principal);
// 2025-era sessions live in one process, so they need sticky routing.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, trackListChanged, writeServersYaml } from '../helpers/gateway.js';
import type { Balancer } from '../helpers/balancer.js';
import { useFleet } from '../helpers/fleet.js';
import { connectModernClient, listedToolNames, postModernDiscover, startHttpGateway, type ListeningProcess } from '../helpers/http.js';

describe('modern HTTP across two loadout processes', () => {
  const fleet = useFleet<ListeningProcess>({ echo: nodeServer(fixture('echo')) });
  const clients = fleet.clients;
  const startTwo = (args: string[] = []): Promise<Balancer> =>
    fleet.start([startHttpGateway(fleet.dirs, args), startHttpGateway(fleet.dirs, args)], (gateway) => gateway.url);

  it('serves discover, build, equip, listen and calls with each request on the other process', async () => {
    const relay = await startTwo();
    const client = await connectModernClient(relay.url);
    clients.push(client);
    expect(client.getProtocolEra()).toBe('modern');
    const listChanged = trackListChanged(client, false);

    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
    const listenedOn = relay.served.find((entry) => entry.method === 'subscriptions/listen')!.upstream;

    const found = await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
    expect(textOf(found)).toContain('echo.echo');
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    expect(built.isError).toBeFalsy();

    // The equip goes to the process the listen stream is not on: the notice must cross processes.
    relay.sendNextTo(1 - listenedOn);
    const equipped = await client.callTool({ name: 'equip-toolset', arguments: { name: 'talk' } });
    expect(equipped.isError, textOf(equipped)).toBeFalsy();
    const equipServedBy = relay.served.findLast((entry) => entry.name === 'equip-toolset')!.upstream;
    expect(equipServedBy).not.toBe(listenedOn);
    await listChanged.waitFor(1);

    // Both processes list and call the equipped tool, whichever gets the request.
    for (let round = 0; round < 2; round++) expect(await listedToolNames(client)).toContain('echo_echo');
    for (let round = 0; round < 2; round++) {
      expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `hello ${round}` } }))).toBe(`hello ${round}`);
    }
    const servedBy = (method: string) => new Set(relay.served.filter((entry) => entry.method === method).map((entry) => entry.upstream));
    expect(servedBy('tools/list')).toEqual(new Set([0, 1]));
    expect(new Set(relay.served.filter((entry) => entry.name === 'echo_echo').map((entry) => entry.upstream))).toEqual(new Set([0, 1]));
    expect(relay.served.some((entry) => entry.method === 'initialize')).toBe(false);
    await subscription.close();

    // A 2025-era session lives in the process that started it: through a relay with no stickiness it breaks.
    const legacy = new Client({ name: 'legacy-test', version: '1.0.0' }, { capabilities: {} });
    const legacyUse = legacy.connect(new StreamableHTTPClientTransport(new URL(relay.url))).then(() => legacy.listTools());
    await expect(legacyUse).rejects.toThrow(/Session not found/);
    await legacy.close();
  });

  it('serves one toolset, always, at /mcp/toolsets/NAME, telling listeners when it is saved again by another process', async () => {
    const relay = await startTwo();
    const main = await connectModernClient(relay.url);
    clients.push(main);
    const built = await main.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    expect(built.isError, textOf(built)).toBeFalsy();

    const endpoint = relay.url.replace(/\/mcp$/, '/mcp/toolsets/talk');
    const fixed = await connectModernClient(endpoint);
    clients.push(fixed);
    expect(fixed.getProtocolEra()).toBe('modern');
    const listed = await listedToolNames(fixed);
    expect(listed).toContain('echo_echo');
    expect(listed).toContain('discover-all-tools');
    expect(listed).not.toContain('equip-toolset');
    expect(textOf(await fixed.callTool({ name: 'echo_echo', arguments: { text: 'fixed' } }))).toBe('fixed');
    const refused = await fixed.callTool({ name: 'build-toolset', arguments: { name: 'other', tools: ['echo.add'], equip: true } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("always serves toolset 'talk'");
    // The save itself went through: the agent is told so, not only that the equip was refused.
    expect(textOf(refused)).toMatch(/^Saved toolset 'other' with 1 tool\. Not equipped: /);

    const listChanged = trackListChanged(fixed, false);
    await fixed.listen({ toolsListChanged: true });
    const listenedOn = relay.served.findLast((entry) => entry.method === 'subscriptions/listen')!.upstream;
    relay.sendNextTo(1 - listenedOn);
    await main.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo', 'echo.add'] } });
    await listChanged.waitFor(1);
    for (let round = 0; round < 2; round++) expect(await listedToolNames(fixed)).toEqual(expect.arrayContaining(['echo_echo', 'echo_add']));
    // The /mcp client's own set did not change.
    expect(await listedToolNames(main)).not.toContain('echo_echo');

    const unknown = await postModernDiscover(relay.url.replace(/\/mcp$/, '/mcp/toolsets/nope'));
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("Toolset 'nope' not found");
    const legacy = new Client({ name: 'legacy-test', version: '1.0.0' }, { capabilities: {} });
    await expect(legacy.connect(new StreamableHTTPClientTransport(new URL(endpoint)))).rejects.toThrow(/2026-07-28 requests only/);
  });

  it('empties a toolset endpoint whose toolset file is deleted, telling its listeners', async () => {
    await fleet.start([startHttpGateway(fleet.dirs)], (gateway) => gateway.url);
    const main = await connectModernClient(fleet.replicas[0]!.url);
    clients.push(main);
    const built = await main.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    expect(built.isError, textOf(built)).toBeFalsy();
    const fixed = await connectModernClient(fleet.replicas[0]!.url.replace(/\/mcp$/, '/mcp/toolsets/talk'));
    clients.push(fixed);
    expect(await listedToolNames(fixed)).toContain('echo_echo');
    const listChanged = trackListChanged(fixed, false);
    await fixed.listen({ toolsListChanged: true });
    await rm(path.join(fleet.dirs.configDir, 'toolsets', 'talk.yaml'));
    await listChanged.waitFor(1);
    expect(await listedToolNames(fixed)).not.toContain('echo_echo');
    const gone = await fixed.callTool({ name: 'echo_echo', arguments: { text: 'x' } });
    expect(gone.isError).toBe(true);
  });

  it('tells a new client why a server failed its discovery, not that it is still being discovered', async () => {
    await writeServersYaml(
      fleet.dirs.configDir,
      { stuck: nodeServer(fixture('hang'), { env: { HANG_ON_START: '1' } }) },
      { gateway: { discovery_timeout_seconds: 3 } },
    );
    await fleet.start([startHttpGateway(fleet.dirs)], (gateway) => gateway.url);
    const early = await connectModernClient(fleet.replicas[0]!.url);
    clients.push(early);
    expect(early.getInstructions()).toContain('stuck: not discovered yet');
    // The failure makes no new catalog: what a request is told must not be the map of before it.
    await eventually(
      async () => (await readFile(path.join(fleet.dirs.dataDir, 'discovery.json'), 'utf8').catch(() => '')).includes('"stuck"'),
      10_000,
      'the failure record',
    );
    const late = await connectModernClient(fleet.replicas[0]!.url);
    clients.push(late);
    expect(late.getInstructions()).toMatch(/stuck: not discovered \(Server 'stuck' failed to start/);
  });

  it('serves a principal whose record is unreadable with the set as it was, and an equip writes it anew', async () => {
    const principalsDir = path.join(fleet.dirs.dataDir, 'principals');
    await mkdir(principalsDir, { recursive: true });
    await writeFile(path.join(principalsDir, 'local.json'), '{"toolset": ');
    await fleet.start([startHttpGateway(fleet.dirs)], (gateway) => gateway.url);
    const client = await connectModernClient(fleet.replicas[0]!.url);
    clients.push(client);
    expect(await listedToolNames(client)).not.toContain('echo_echo');
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(built.isError, textOf(built)).toBeFalsy();
    expect(await listedToolNames(client)).toContain('echo_echo');
    expect(JSON.parse(await readFile(path.join(principalsDir, 'local.json'), 'utf8'))).toEqual({ toolset: 'talk' });
    expect(fleet.replicas[0]!.output()).toContain('unreadable principal toolset file');
  });

  it('keeps a separate equipped set per bearer token, stores no token, and answers a wrong token 401', async () => {
    const relay = await startTwo(['--token', 'alpha-secret', '--token', 'beta-secret']);
    const refused = await postModernDiscover(relay.url, { Authorization: 'Bearer wrong' });
    expect(refused.status).toBe(401);
    await expect(connectModernClient(relay.url, 'wrong')).rejects.toThrow();

    const alpha = await connectModernClient(relay.url, 'alpha-secret');
    const beta = await connectModernClient(relay.url, 'beta-secret');
    clients.push(alpha, beta);
    expect(alpha.getProtocolEra()).toBe('modern');
    const built = await alpha.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(built.isError, textOf(built)).toBeFalsy();
    const denied = await beta.callTool({ name: 'echo_echo', arguments: { text: 'x' } });
    expect(denied.isError).toBe(true);
    const betaBuilt = await beta.callTool({ name: 'build-toolset', arguments: { name: 'sums', tools: ['echo.add'], equip: true } });
    expect(betaBuilt.isError, textOf(betaBuilt)).toBeFalsy();

    for (let round = 0; round < 2; round++) {
      const [alphaTools, betaTools] = [await listedToolNames(alpha), await listedToolNames(beta)];
      expect(alphaTools).toContain('echo_echo');
      expect(alphaTools).not.toContain('echo_add');
      expect(betaTools).toContain('echo_add');
      expect(betaTools).not.toContain('echo_echo');
    }

    const principalsDir = path.join(fleet.dirs.dataDir, 'principals');
    const files = await readdir(principalsDir);
    expect(files.filter((file) => file.endsWith('.json'))).toHaveLength(2);
    for (const file of files.filter((name) => name.endsWith('.json'))) {
      expect(file).not.toMatch(/secret/);
      expect(await readFile(path.join(principalsDir, file), 'utf8')).not.toMatch(/secret/);
    }
  });
});
