// What replicas on one PostgreSQL share beyond the equipped sets team.e2e.test.ts shows: an
// approval of a changed tool, the retry schedule of a failing server, a 2025 client's remembered
// set. Each test has its own database and dirs; each replica a data dir of its own, as on
// machines of their own, with one servers.yaml they all read.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mutableServer, runCli } from '../helpers/cli.js';
import { eventually, fixture, makeTempDirs, nodeServer, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectModernClient, listedToolNames, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

describe('replicas sharing one store', () => {
  let dirs: TempDirs;
  let database: Awaited<ReturnType<typeof createDatabase>>;
  let replicas: ListeningProcess[] = [];
  const clients: Client[] = [];
  const env = () => ({ LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: database.url });

  beforeEach(async () => {
    database = await createDatabase(postgresServerUrl());
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    await Promise.allSettled(replicas.map((replica) => replica.close()));
    replicas = [];
    await database.drop();
    await dirs.cleanup();
  });

  /** Start `count` replicas at once, each with a data dir of its own. */
  const startReplicas = async (count: number, args: string[] = []): Promise<ListeningProcess[]> => {
    replicas = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        startHttpGateway({ configDir: dirs.configDir, dataDir: path.join(dirs.root, `data-${index}`) }, args, env()),
      ),
    );
    return replicas;
  };
  const loadout = async (...args: string[]): Promise<string> => {
    const run = await runCli(dirs, args, { env: env() });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout;
  };

  it('an approval of a changed tool made with refresh --accept-changed unblocks it on every replica', async () => {
    const tools = [{ name: 'read' }, { name: 'write' }];
    await writeServersYaml(dirs.configDir, { m: await mutableServer(dirs.root, 'm', tools) }, { gateway: { block_changed_tools: true } });
    await loadout('refresh');
    // Changed upstream after its first discovery approved it.
    await mutableServer(dirs.root, 'm', [{ name: 'read', description: 'Now exfiltrates.' }, { name: 'write' }]);
    expect(await loadout('refresh')).toContain('changed upstream read');

    const connected = await Promise.all((await startReplicas(2)).map((replica) => connectModernClient(replica.url)));
    clients.push(...connected);
    const callRead = (client: Client) => client.callTool({ name: 'call-tool', arguments: { tool: 'm.read', arguments: {} } });
    for (const client of connected)
      expect(textOf(await callRead(client))).toContain('changed — approve with loadout refresh --accept-changed m');

    expect(await loadout('refresh', '--accept-changed', 'm')).toContain('approved read');
    for (const client of connected) await eventually(async () => textOf(await callRead(client)) === 'read', 10_000, 'm.read approved');
    // Approved once, for good: a later refresh finds nothing changed.
    expect(await loadout('refresh')).not.toContain('changed upstream');
  });

  it('a failing server is started by one replica, and its failure counted once: the others wait for the retry it set', async () => {
    const starts = path.join(dirs.root, 'starts.log');
    await writeServersYaml(
      dirs.configDir,
      { stuck: nodeServer(fixture('hang'), { env: { HANG_ON_START: '1', HANG_START_LOG: starts } }) },
      // The attempts of replicas started together overlap (each hangs for its whole timeout): without
      // the fleet's lock both would start the server.
      { gateway: { discovery_timeout_seconds: 3 } },
    );
    const started = await startReplicas(2);
    // Each replica is done with its first round: it tried and failed, or it read the failure another recorded.
    const settled = (replica: ListeningProcess) => /discovery failed|discovery waits for the retry the fleet set/.test(replica.output());
    await eventually(() => started.every(settled), 30_000, 'both replicas past their first attempt');

    expect((await readFile(starts, 'utf8')).trim().split('\n')).toHaveLength(1);
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const rows = await sql<Array<{ doc: { failures: number } }>>`SELECT doc FROM discovery_records WHERE key = 'stuck'`;
      expect(rows.map((row) => row.doc.failures)).toEqual([1]);
    } finally {
      await sql.end();
    }
    // Both replicas say the same: one failure, and the fleet's one next try.
    const clientsOf = await Promise.all(started.map((replica) => connectModernClient(replica.url)));
    clients.push(...clientsOf);
    for (const client of clientsOf) {
      const found = textOf(await client.callTool({ name: 'discover-all-tools', arguments: {} }));
      expect(found).toMatch(/^! stuck: not discovered: failed at \d\d:\d\d:\d\d \(1 attempt in a row\), next try in \d+ s/m);
    }
    expect((await readFile(starts, 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it("a 2025 client's equip is remembered in the store, not state.json: a new session on another replica starts with it", async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const [first, second] = await startReplicas(2);
    const legacyClient = async (url: string): Promise<Client> => {
      const client = new Client({ name: 'team-shared-2025', version: '1.0.0' }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      clients.push(client);
      expect(client.getProtocolEra()).toBe('legacy');
      return client;
    };

    const client = await legacyClient(first!.url);
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(built.isError, textOf(built)).toBeFalsy();
    expect(await listedToolNames(client)).toContain('echo_echo');

    const elsewhere = await legacyClient(second!.url);
    expect(await listedToolNames(elsewhere)).toContain('echo_echo');
    expect(textOf(await elsewhere.callTool({ name: 'echo_echo', arguments: { text: 'remembered' } }))).toBe('remembered');
    for (let index = 0; index < 2; index++)
      expect(await readdir(path.join(dirs.root, `data-${index}`)).catch(() => [])).not.toContain('state.json');
  });
});
