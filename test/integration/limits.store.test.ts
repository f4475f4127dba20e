// Rate limits counted in the Postgres store, so that N replicas enforce one limit: two
// `serve --http --store` replicas behind a round-robin balancer refuse a principal's calls once
// their shared budget is spent, whichever replica each call reaches; the store's limit_take
// counts concurrent calls of two replicas exactly; with the store unreachable each replica falls
// back to its own count (fail open), says so once, and goes back to the store when it answers.
import { SdkHttpError } from '@modelcontextprotocol/client';
import path from 'node:path';
import postgres from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useFleet } from '../helpers/fleet.js';
import { eventually, fixture, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { connectModernClient, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { TEST_SECRET_KEY, usePostgresReplicas } from '../helpers/storeBackends.js';

const SERVERS = { echo: nodeServer(fixture('echo')) };

describe('rate limits shared by two replicas through the store', () => {
  let database: Awaited<ReturnType<typeof createDatabase>>;
  beforeEach(async () => {
    database = await createDatabase(postgresServerUrl());
  });
  afterEach(() => database.drop());
  const fleet = useFleet<ListeningProcess>(SERVERS);

  const startTwo = async (limits: Record<string, unknown>) => {
    await writeServersYaml(fleet.dirs.configDir, SERVERS, { limits });
    return fleet.start(
      ['a', 'b'].map((name) =>
        startHttpGateway(
          { configDir: fleet.dirs.configDir, dataDir: path.join(fleet.dirs.root, `data-${name}`) },
          ['--store', database.url, '--token', 'tok-alice', '--token', 'tok-bob', '--equip', 'all'],
          { LOADOUT_SECRET_KEY: TEST_SECRET_KEY },
        ),
      ),
      (replica) => replica.url,
    );
  };
  const refusalOf = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => undefined,
      (error: unknown) => error,
    );

  it('refuses calls alternating between the replicas once the shared budget is spent; another principal has its own', async () => {
    const balancer = await startTwo({ server_calls_per_minute: 3 });
    const alice = await connectModernClient(balancer.url, 'tok-alice');
    fleet.clients.push(alice);
    for (const text of ['1', '2', '3']) expect(textOf(await alice.callTool({ name: 'echo_echo', arguments: { text } }))).toBe(text);
    // Each replica alone would allow three: the fourth and fifth, on either, are over the shared limit.
    for (const text of ['4', '5']) {
      const error = await refusalOf(alice.callTool({ name: 'echo_echo', arguments: { text } }));
      expect(error).toBeInstanceOf(SdkHttpError);
      expect((error as SdkHttpError).status).toBe(429);
      expect(String((error as SdkHttpError).message)).toMatch(/at most 3 calls of server 'echo' a minute/);
    }
    const calls = balancer.served.filter((routed) => routed.method === 'tools/call');
    expect(calls).toHaveLength(5);
    expect(new Set(calls.map((routed) => routed.upstream))).toEqual(new Set([0, 1]));
    const bob = await connectModernClient(balancer.url, 'tok-bob');
    fleet.clients.push(bob);
    expect(textOf(await bob.callTool({ name: 'echo_echo', arguments: { text: 'bob' } }))).toBe('bob');
    for (const replica of fleet.replicas) expect(replica.output()).not.toContain('cannot be counted in the store');
  });

  it('fails open to each replica counting its own while the store cannot count, and says so once each way', async () => {
    const balancer = await startTwo({ server_calls_per_minute: 2 });
    const alice = await connectModernClient(balancer.url, 'tok-alice');
    fleet.clients.push(alice);
    const admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      await admin`ALTER TABLE limit_buckets RENAME TO limit_buckets_away`;
      // Two replicas, two calls each: four calls go through where the store would allow two.
      for (const text of ['1', '2', '3', '4']) expect(textOf(await alice.callTool({ name: 'echo_echo', arguments: { text } }))).toBe(text);
      expect(await refusalOf(alice.callTool({ name: 'echo_echo', arguments: { text: '5' } }))).toBeInstanceOf(SdkHttpError);
      for (const replica of fleet.replicas) {
        const said = replica.output().split('rate limits cannot be counted in the store; each replica counts its own').length - 1;
        expect(said).toBe(1);
      }
      await admin`ALTER TABLE limit_buckets_away RENAME TO limit_buckets`;
      // Asked again after SHARED_LIMIT_RETRY_MS: the store's own bucket (untouched) lets calls through.
      await eventually(
        async () => {
          await alice.callTool({ name: 'echo_echo', arguments: { text: 'again' } }).catch(() => undefined);
          return fleet.replicas.some((replica) => replica.output().includes('rate limits are counted in the store again'));
        },
        20_000,
        'a replica to count in the store again',
      );
    } finally {
      await admin.end();
    }
  });
});

describe('limit_take', () => {
  const open = usePostgresReplicas();

  it('lets exactly the limit through of many concurrent calls from two replicas, and takes from no bucket when one is spent', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const keys = ['alice', 'alice\ngithub'];
    const calls = Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? a : b).fleet!.limits.take(keys, [20, 10], true));
    const waits = await Promise.all(calls);
    expect(waits.filter((wait) => wait.every((ms) => ms === 0))).toHaveLength(10);
    const refused = waits.find((wait) => wait[1]! > 0)!;
    expect(refused[0]).toBe(0);
    expect(refused[1]).toBeGreaterThan(0);
    expect(refused[1]).toBeLessThanOrEqual(6000);
    // The 30 refused calls took nothing from the principal's bucket: 10 of its 20 are left.
    expect(await a.fleet!.limits.take(['alice'], [20], false)).toEqual([0]);
    // A lowered limit keeps what was used: 10 of 20 left becomes 0 of 10 left.
    expect((await b.fleet!.limits.take(['alice'], [10], true))[0]).toBeGreaterThan(0);
  });
});
