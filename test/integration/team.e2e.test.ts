// Team scale, end to end: three `loadout serve --http --store URL` replicas, each with a data dir of
// its own (as on three machines), one servers.yaml they all read, one PostgreSQL database, and a
// round-robin balancer in front. A 2026-07-28 client and a 2025 client each discovers, builds, equips, hears the change
// on another replica's listen stream, and calls; concurrent saves through two replicas lose
// nothing; a replica killed mid-call leaves the next request to the others.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBalancer, type Balancer } from '../helpers/balancer.js';
import { useFleet } from '../helpers/fleet.js';
import {
  descendantsOf,
  eventually,
  fixture,
  isAlive,
  makeTempDirs,
  nodeServer,
  textOf,
  trackListChanged,
  writeServersYaml,
} from '../helpers/gateway.js';
import { connectModernClient, freePort, listedToolNames, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { startPostgresServer } from '../helpers/postgresServer.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

const REPLICAS = 3;

async function commandLines(pids: number[]): Promise<string[]> {
  return Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
}

describe('three replicas on one Postgres behind a round-robin balancer', () => {
  let database: Awaited<ReturnType<typeof createDatabase>>;
  const databaseUrl = () => database.url;
  // Registered before the fleet, so the database is dropped after its replicas are closed.
  beforeEach(async () => {
    database = await createDatabase(postgresServerUrl());
  });
  afterEach(() => database.drop());
  const fleet = useFleet<ListeningProcess>({ echo: nodeServer(fixture('echo')), slow: nodeServer(fixture('slow')) });
  const clients = fleet.clients;

  // Each replica has its own data dir: nothing is shared but servers.yaml and the database.
  const startReplicas = (): Promise<Balancer> =>
    fleet.start(
      Array.from({ length: REPLICAS }, (_, index) =>
        startHttpGateway(
          { configDir: fleet.dirs.configDir, dataDir: path.join(fleet.dirs.root, `data-${index}`) },
          ['--store', databaseUrl()],
          {
            LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
          },
        ),
      ),
      (replica) => replica.url,
    );

  it('discovers, builds, equips, hears the change on another replica, and calls on every replica; servers.yaml is never written', async () => {
    const balancer = await startReplicas();
    const client = await connectModernClient(balancer.url);
    clients.push(client);
    expect(client.getProtocolEra()).toBe('modern');
    const listChanged = trackListChanged(client, false);
    await client.listen({ toolsListChanged: true });
    const listenedOn = balancer.served.find((entry) => entry.method === 'subscriptions/listen')!.upstream;

    const found = await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
    expect(textOf(found)).toContain('echo.echo');
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    expect(built.isError, textOf(built)).toBeFalsy();

    // The equip goes to a replica the listen stream is not on: the notice must cross the database.
    balancer.sendNextTo((listenedOn + 1) % REPLICAS);
    const equipped = await client.callTool({ name: 'equip-toolset', arguments: { name: 'talk' } });
    expect(equipped.isError, textOf(equipped)).toBeFalsy();
    expect(balancer.served.findLast((entry) => entry.name === 'equip-toolset')!.upstream).not.toBe(listenedOn);
    await listChanged.waitFor(1);

    for (let round = 0; round < REPLICAS; round++) expect(await listedToolNames(client)).toContain('echo_echo');
    for (let round = 0; round < REPLICAS; round++) {
      expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `hello ${round}` } }))).toBe(`hello ${round}`);
    }
    expect(new Set(balancer.served.filter((entry) => entry.name === 'echo_echo').map((entry) => entry.upstream)).size).toBe(REPLICAS);

    // State is in the store: servers.yaml as written, no state files in any data dir, no toolsets folder.
    expect(await readFile(path.join(fleet.dirs.configDir, 'servers.yaml'), 'utf8')).toBe(fleet.serversYaml);
    expect(await readdir(fleet.dirs.configDir)).not.toContain('toolsets');
    for (let index = 0; index < REPLICAS; index++) {
      const files = await readdir(path.join(fleet.dirs.root, `data-${index}`)).catch(() => []);
      for (const stateFile of ['catalog.json', 'principals']) expect(files).not.toContain(stateFile);
    }
    const sql = postgres(databaseUrl(), { max: 1, onnotice: () => undefined });
    try {
      const rows = await sql<Array<{ key: string; doc: { toolset: string } }>>`SELECT key, doc FROM equipped_sets`;
      expect(rows.map((row) => row.doc.toolset)).toEqual(['talk']);
      expect((await sql<Array<{ key: string }>>`SELECT key FROM catalog_entries ORDER BY key`).map((row) => row.key)).toEqual([
        'echo',
        'slow',
      ]);
    } finally {
      await sql.end();
    }
  });

  it('serves a 2025 client from every replica: its session, its equip heard on the replica holding its GET stream, its calls', async () => {
    const balancer = await startReplicas();
    const client = new Client({ name: 'team-test-2025', version: '1.0.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(balancer.url));
    await client.connect(transport);
    clients.push(client);
    expect(client.getProtocolEra()).toBe('legacy');
    await eventually(() => balancer.served.some((entry) => entry.httpMethod === 'GET'), 10_000, 'the GET stream');
    const streamOn = balancer.served.find((entry) => entry.httpMethod === 'GET')!.upstream;
    const listChanged = trackListChanged(client, false);

    const found = await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
    expect(textOf(found)).toContain('echo.echo');
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    expect(built.isError, textOf(built)).toBeFalsy();
    // The equip goes through a replica the GET stream is not on: the notice must cross the database.
    balancer.sendNextTo((streamOn + 1) % REPLICAS);
    const equipped = await client.callTool({ name: 'equip-toolset', arguments: { name: 'talk' } });
    expect(equipped.isError, textOf(equipped)).toBeFalsy();
    expect(balancer.served.findLast((entry) => entry.name === 'equip-toolset')!.upstream).not.toBe(streamOn);
    await listChanged.waitFor(1);

    for (let round = 0; round < REPLICAS; round++) {
      expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `hello ${round}` } }))).toBe(`hello ${round}`);
    }
    expect(new Set(balancer.served.filter((entry) => entry.name === 'echo_echo').map((entry) => entry.upstream)).size).toBe(REPLICAS);
    // One session, begun once: every replica served it from its record.
    expect(balancer.served.filter((entry) => entry.method === 'initialize')).toHaveLength(1);
    expect(new Set(balancer.served.filter((entry) => entry.httpMethod === 'POST').map((entry) => entry.upstream)).size).toBe(REPLICAS);
    expect(await readFile(path.join(fleet.dirs.configDir, 'servers.yaml'), 'utf8')).toBe(fleet.serversYaml);
  });

  it('loses none of 2 x 100 concurrent toolset saves through two replicas, and reports none saved that was not', async () => {
    await startReplicas();
    const [a, b] = await Promise.all([connectModernClient(fleet.replicas[0]!.url), connectModernClient(fleet.replicas[1]!.url)]);
    clients.push(a, b);
    await a.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
    const save = (client: Client, name: string, tools: string[]) =>
      client.callTool({ name: 'build-toolset', arguments: { name, tools } }).then(
        (result) => ({ name, tools, saved: !result.isError, text: textOf(result) }),
        (error: unknown) => ({ name, tools, saved: false, text: String(error) }),
      );
    // Each name is saved through both replicas at once, with different tools: one of the two must win whole.
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, index) => [
        save(a, `set-${index}`, ['echo.echo']),
        save(b, `set-${index}`, ['echo.add', 'echo.echo']),
        save(a, `a-${index}`, ['echo.echo']),
        save(b, `b-${index}`, ['echo.add']),
      ]).flat(),
    );
    const sql = postgres(databaseUrl(), { max: 1, onnotice: () => undefined });
    let kept: Map<string, string[]>;
    try {
      const rows = await sql<Array<{ key: string; doc: { tools: string[] } }>>`SELECT key, doc FROM toolsets`;
      kept = new Map(rows.map((row) => [row.key, row.doc.tools]));
    } finally {
      await sql.end();
    }
    for (const outcome of outcomes) {
      if (!outcome.saved) continue;
      expect(outcome.text).toMatch(/^Saved toolset/);
      if (outcome.name.startsWith('set-')) {
        // Saved twice: whichever came last is kept, whole.
        expect([['echo.echo'], ['echo.add', 'echo.echo']]).toContainEqual(kept.get(outcome.name));
      } else expect(kept.get(outcome.name)).toEqual(outcome.tools);
    }
    expect(outcomes.filter((outcome) => outcome.saved)).toHaveLength(400);
    expect(kept.size).toBe(300);
  });

  it('answers the next request on another replica after one is killed mid-call, leaving no downstream process', async () => {
    const balancer = await startReplicas();
    const client = await connectModernClient(balancer.url);
    clients.push(client);
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'nap', tools: ['slow.sleep'], equip: true } });
    expect(built.isError, textOf(built)).toBeFalsy();
    for (let round = 0; round < REPLICAS; round++) expect(await listedToolNames(client)).toContain('slow_sleep');

    const victim = balancer.next;
    // Its failure is taken at once: it may come while the kill below is awaited, before any later handler.
    const callFailed = expect(client.callTool({ name: 'slow_sleep', arguments: { ms: 20_000 } })).rejects.toThrow();
    // Under way: the request is at the victim, and the victim runs the slow server.
    await eventually(
      async () =>
        [...balancer.inFlight].some((routed) => routed.upstream === victim && routed.name === 'slow_sleep') &&
        (await commandLines(await descendantsOf(fleet.replicas[victim]!.pid))).some((line) => line.includes('slow')),
      10_000,
      'the call under way on the victim',
    );
    const children = await descendantsOf(fleet.replicas[victim]!.pid);
    await fleet.replicas[victim]!.close('SIGKILL');
    await callFailed;

    for (let round = 0; round < REPLICAS; round++) {
      expect(textOf(await client.callTool({ name: 'slow_sleep', arguments: { ms: 10 } }))).toBe('slept 10 ms');
    }
    // The killed replica's stdio servers see their stdin close and exit.
    for (const pid of children) await eventually(async () => !(await isAlive(pid)), 10_000, `process ${pid} to exit`);
  });

  it('refuses to start in store mode without LOADOUT_SECRET_KEY, or with Postgres unreachable, with one line each', async () => {
    const env = { LOADOUT_SECRET_KEY: '' };
    const noKey = await runCli(fleet.dirs, ['serve', '--http', '--port', '0', '--store', databaseUrl()], { env });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr.trim().split('\n')).toHaveLength(1);
    expect(noKey.stderr).toContain('store mode (--store or LOADOUT_STORE_URL) needs LOADOUT_SECRET_KEY');

    const port = await freePort();
    const unreachable = await runCli(fleet.dirs, ['serve', '--http', '--port', '0'], {
      env: { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: `postgres://loadout:hunter2@127.0.0.1:${port}/team` },
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trim().split('\n')).toHaveLength(1);
    expect(unreachable.stderr).toContain(
      `store postgres://loadout:***@127.0.0.1:${port}/team: cannot connect: nothing is listening there (is Postgres running?) (ECONNREFUSED)`,
    );
    expect(unreachable.stderr).not.toContain('hunter2');
  });
});

describe('replicas while Postgres is away', () => {
  it('go on calling equipped tools, refuse changes naming the store, and take changes again once it is back', async () => {
    const server = await startPostgresServer();
    const dirs = await makeTempDirs();
    const replicas: ListeningProcess[] = [];
    let balancer: Balancer | undefined;
    let client: Client | undefined;
    try {
      const database = await createDatabase(server.url);
      await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
      for (let index = 0; index < 2; index++) {
        replicas.push(
          await startHttpGateway({ configDir: dirs.configDir, dataDir: path.join(dirs.root, `data-${index}`) }, ['--store', database.url], {
            LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
          }),
        );
      }
      balancer = await startBalancer(replicas.map((replica) => replica.url));
      client = await connectModernClient(balancer.url);
      const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
      expect(built.isError, textOf(built)).toBeFalsy();
      for (let round = 0; round < 2; round++) expect(await listedToolNames(client)).toContain('echo_echo');

      // A listen stream held through the outage: its replica's bus must listen again to hear the next change.
      const listChanged = trackListChanged(client, false);
      await client.listen({ toolsListChanged: true });
      const listenedOn = balancer.served.findLast((entry) => entry.method === 'subscriptions/listen')!.upstream;
      await server.stop();
      const stoppedAt = Date.now();
      // Calls go on for the whole outage (5 s), on both replicas.
      for (let round = 0; Date.now() - stoppedAt < 5000 || round < 4; round++) {
        expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: `still ${round}` } }))).toBe(`still ${round}`);
      }
      const masked = database.url.replace(/:[^:@/]*@/, ':***@');
      for (let round = 0; round < 2; round++) {
        const refused = await client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain(`store ${masked}: cannot`);
      }
      // Refused means not applied: both replicas still serve the set as it was.
      for (let round = 0; round < 2; round++) expect(await listedToolNames(client)).toContain('echo_echo');

      await server.start();
      // The store's pool connects again on the next statement; the bus listens again after its backoff.
      await eventually(
        async () => {
          if (balancer!.next === listenedOn) await listedToolNames(client!);
          const rebuilt = await client!.callTool({
            name: 'build-toolset',
            arguments: { name: 'pair', tools: ['echo.echo', 'echo.add'], equip: true },
          });
          return !rebuilt.isError;
        },
        20_000,
        'a change once Postgres is back',
      );
      await listChanged.waitFor(1, 20_000);
      for (let round = 0; round < 2; round++) expect(await listedToolNames(client)).toContain('echo_add');
    } finally {
      await client?.close();
      await balancer?.close();
      await Promise.allSettled(replicas.map((replica) => replica.close()));
      await dirs.cleanup();
      await server.destroy();
    }
  });
});
