// Replicas through a Postgres outage (a failover's few seconds, here a server of the test's own
// stopped and started): a replica restarted while the store is away serves each principal what it
// served before from its local copy (tools/list, a call, get-active-toolset), new sessions of both
// eras open, a principal it cannot know is answered with an error naming the store (never an empty
// set), a 2025 session it never held with a 503 and Retry-After, and once the store is back a
// change made through another replica is seen without a restart.
import type { Client } from '@modelcontextprotocol/client';
import { readFile, readdir, stat } from 'node:fs/promises';
import postgres from 'postgres';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFleet } from '../helpers/fleet.js';
import { eventually, fixture, nodeServer, textOf } from '../helpers/gateway.js';
import {
  MCP_HEADERS,
  connectHttp,
  connectModernClient,
  listedToolNames,
  startHttpGateway,
  type ListeningProcess,
} from '../helpers/http.js';
import { createDatabase } from '../helpers/postgres.js';
import { startPostgresServer } from '../helpers/postgresServer.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789';

// Every file under `dir`, with its mode.
async function filesUnder(dir: string): Promise<Array<{ file: string; mode: number }>> {
  const names = await readdir(dir, { recursive: true });
  const files: Array<{ file: string; mode: number }> = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const info = await stat(file);
    if (info.isFile()) files.push({ file, mode: info.mode & 0o777 });
  }
  return files;
}

describe('replicas through a Postgres outage', () => {
  const fleet = useFleet<ListeningProcess>({ echo: nodeServer(fixture('echo')) });

  it('restarted during it, a replica serves what it served before; new sessions open; an unknown set is an error naming the store; the store back, changes are seen', async () => {
    const server = await startPostgresServer();
    const opened: Array<Client | ListeningProcess | { close(): Promise<unknown> }> = [];
    try {
      const database = await createDatabase(server.url);
      const masked = database.url.replace(/:[^:@/]*@/, ':***@');
      const dataDirs = [0, 1].map((index) => path.join(fleet.dirs.root, `data-${index}`));
      const replica = (index: number) =>
        startHttpGateway(
          { configDir: fleet.dirs.configDir, dataDir: dataDirs[index]! },
          ['--store', database.url, '--token', ALICE, '--token', BOB],
          {
            LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
          },
        );
      await fleet.start([replica(0), replica(1)], (started) => started.url);
      const [first, second] = fleet.replicas as [ListeningProcess, ListeningProcess];

      // Alice builds and equips on the first replica (a modern client), and a 2025 session there
      // equips it too, which is what a new session of hers gets (her @last-stop.<id> record).
      const alice = await connectModernClient(first.url, ALICE);
      fleet.clients.push(alice);
      const built = await alice.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
      expect(built.isError, textOf(built)).toBeFalsy();
      const legacy = await connectHttp(first.url, { token: ALICE });
      opened.push(legacy);
      const equipped = await legacy.client.callTool({ name: 'equip-toolset', arguments: { name: 'talk' } });
      expect(equipped.isError, textOf(equipped)).toBeFalsy();
      // The second replica serves Alice once (so its copy holds her set), then is stopped.
      const aliceThere = await connectModernClient(second.url, ALICE);
      expect(await listedToolNames(aliceThere)).toContain('echo_echo');
      await aliceThere.close();
      // The @last-stop equip reached the second replica's copy: it re-reads the record on its notice.
      const copyDir = path.join(dataDirs[1]!, 'store-copy');
      await eventually(
        async () => (await filesUnder(copyDir).catch(() => [])).length >= 4,
        10_000,
        "the second replica's copy of Alice's set, the toolset, the catalog and @last-stop",
      );
      await second.close();
      for (const { file, mode } of await filesUnder(copyDir)) expect(mode, file).toBe(0o600);

      await server.stop();
      // Restarted while the store is away: it starts on its copy.
      const restarted = await replica(1);
      opened.push(restarted);
      expect(restarted.output()).toContain('store away at start; serving from the local copy');
      // A 2025 session it never held cannot be read now: 503 with Retry-After, so a balancer sends
      // the request on to a replica holding it (the first one) and a client tries again.
      const unheld = await fetch(restarted.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${ALICE}`, 'Mcp-Session-Id': legacy.transport.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
      });
      expect(unheld.status).toBe(503);
      expect(Number(unheld.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await unheld.text()).toContain(`store ${masked}: cannot read sessions`);

      const aliceBack = await connectModernClient(restarted.url, ALICE);
      opened.push(aliceBack);
      expect(await listedToolNames(aliceBack)).toContain('echo_echo');
      expect(textOf(await aliceBack.callTool({ name: 'echo_echo', arguments: { text: 'through the outage' } }))).toBe('through the outage');
      expect(textOf(await aliceBack.callTool({ name: 'get-active-toolset', arguments: {} }))).toContain('talk');

      // A new 2025 session opens during the outage, with the set remembered at the last stop.
      const legacyNew = await connectHttp(restarted.url, { token: ALICE });
      opened.push(legacyNew);
      expect((await legacyNew.client.listTools()).tools.map((tool) => tool.name)).toContain('echo_echo');
      expect(textOf(await legacyNew.client.callTool({ name: 'echo_echo', arguments: { text: 'new session' } }))).toBe('new session');

      // Bob was never served by this replica: his set is unknown here, and the answer says why.
      const bob = await connectModernClient(restarted.url, BOB);
      opened.push(bob);
      for (const ask of [
        () => bob.listTools(undefined, { cacheMode: 'bypass' }),
        () => bob.callTool({ name: 'get-active-toolset', arguments: {} }),
      ]) {
        const failure = await ask().then(
          (answer) => textOf(answer),
          (error: unknown) => String(error),
        );
        expect(failure).toContain(`store ${masked}: cannot`);
        expect(failure).not.toContain('No toolset is equipped');
      }

      await server.start();
      // Through the first replica, Alice equips another set; the restarted one serves it, unrestarted.
      await eventually(
        async () => {
          const rebuilt = await alice.callTool({
            name: 'build-toolset',
            arguments: { name: 'pair', tools: ['echo.echo', 'echo.add'], equip: true },
          });
          return !rebuilt.isError;
        },
        20_000,
        'a change once Postgres is back',
      );
      await eventually(
        async () => (await listedToolNames(aliceBack)).includes('echo_add'),
        20_000,
        'the restarted replica to serve the new set',
      );
      expect(textOf(await aliceBack.callTool({ name: 'get-active-toolset', arguments: {} }))).toContain('pair');
      // Bob is known again: his own set is served (nothing he equipped; Alice's last stop is hers alone).
      const bobsTools = await listedToolNames(bob);
      expect(bobsTools).toContain('get-active-toolset');
      expect(bobsTools).not.toContain('echo_echo');
      // The restarted replica's copy now holds Alice's new set, not the one it started on.
      const kept = async () => Promise.all((await filesUnder(copyDir)).map(({ file }) => readFile(file, 'utf8')));
      await eventually(async () => (await kept()).some((text) => text.includes('"toolset":"pair"')), 10_000, 'the copy refreshed');
      expect((await kept()).filter((text) => text.includes('"toolset":"talk"') && !text.includes('@last-stop'))).toEqual([]);
      // The 2025 session opened during the outage is recorded once the store is back, as it is used.
      const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
      opened.push({ close: () => sql.end() });
      await eventually(
        async () => {
          await legacyNew.client.listTools();
          return (await sql`SELECT key FROM sessions WHERE key = ${legacyNew.transport.sessionId!}`).length === 1;
        },
        10_000,
        'the session opened during the outage in the store',
      );
    } finally {
      await Promise.allSettled(opened.map((thing) => thing.close()));
      await server.destroy();
    }
  });
});
