// The store's faults, each one line naming the URL with its password masked and the cause; a
// schema newer than this loadout is refused; and a replica that loses Postgres for a few seconds
// listens again by itself and hears what changed.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { storeConnectionLoss } from '../../src/cli/rejectionGuard.js';
import { openPostgresStore, type TeamStore } from '../../src/store/index.js';
import { readMigrations } from '../../src/store/migrations.js';
import { createDatabase, postgresServerUrl, withDatabase } from '../helpers/postgres.js';
import { freePort } from '../helpers/http.js';
import { startPostgresServer } from '../helpers/postgresServer.js';
import { TEST_SECRET_KEY, nextChange } from '../helpers/storeBackends.js';

const oneLine = (error: unknown) => {
  expect(error).toBeInstanceOf(Error);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  expect(message).not.toContain('loadout-test');
  return message;
};
const failure = (url: string) => openPostgresStore({ url, listen: false }).then(() => undefined, oneLine);

describe('store faults', () => {
  it('names a malformed URL, wrong credentials, a missing database and an unreachable server, one line each', async () => {
    const server = new URL(postgresServerUrl());
    expect(await failure('not a url at all')).toBe(
      "store URL 'not a url at all' is not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE",
    );
    expect(await failure('mysql://u:loadout-test@127.0.0.1/db')).toBe(
      "store URL 'mysql://u:***@127.0.0.1/db' has scheme 'mysql'; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE",
    );
    const wrongPassword = `postgres://postgres:nope@127.0.0.1:${server.port}/postgres`;
    expect(await failure(wrongPassword)).toBe(
      `store postgres://postgres:***@127.0.0.1:${server.port}/postgres: cannot connect: wrong password for that user (28P01)`,
    );
    expect(await failure(withDatabase(server.href, 'no_such_db'))).toBe(
      `store postgres://postgres:***@127.0.0.1:${server.port}/no_such_db: cannot connect: the database does not exist (create it with \`createdb\`, or fix the name) (3D000)`,
    );
    const port = await freePort();
    expect(await failure(`postgres://postgres:loadout-test@127.0.0.1:${port}/postgres`)).toBe(
      `store postgres://postgres:***@127.0.0.1:${port}/postgres: cannot connect: nothing is listening there (is Postgres running?) (ECONNREFUSED)`,
    );
  });

  it('refuses a schema migrated by a newer loadout, with one line', async () => {
    const database = await createDatabase(postgresServerUrl());
    try {
      const store = await openPostgresStore({ url: database.url, listen: false });
      await store.close();
      const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
      await sql`INSERT INTO store_migrations (version, name) VALUES (99, '0099_future')`;
      await sql.end();
      const masked = database.url.replace('loadout-test', '***');
      const known = (await readMigrations()).length;
      for (const migrate of [true, false]) {
        const message = await openPostgresStore({ url: database.url, listen: false, migrate }).then(() => undefined, oneLine);
        expect(message).toBe(
          `store ${masked}: its schema is at version 99, newer than this loadout knows (${known}); upgrade loadout on this machine`,
        );
      }
    } finally {
      await database.drop();
    }
  });

  it('reads from the change log what was committed while a replica was not listening', async () => {
    const database = await createDatabase(postgresServerUrl());
    const a = await openPostgresStore({ url: database.url, listen: false });
    // B waits at least a second before listening again: A's write lands while B is away.
    const b = await openPostgresStore({ url: database.url, bus: { reconnectBaseMs: 2000, reconnectMaxMs: 2000, heartbeatMs: 60_000 } });
    try {
      const heard = nextChange(b, (change) => (change.type === 'change' ? change : undefined));
      const admin = postgres(database.url, { max: 1, onnotice: () => undefined });
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'loadout-listen' AND datname = current_database()`;
      await admin.end();
      const revision = await a.equipped.put('p1', { toolset: 'dev' });
      expect(await heard).toEqual({ type: 'change', kind: 'equipped', key: 'p1', op: 'put', revision, missed: true });
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
      await database.drop();
    }
  });

  describe('Postgres lost for a few seconds', () => {
    const stores: TeamStore[] = [];
    let stopServer: (() => Promise<void>) | undefined;
    afterAll(async () => {
      await Promise.allSettled(stores.map((store) => store.close()));
      await stopServer?.();
    });

    it('fails a write with one line naming the store, then B listens again and hears changes made through A', async () => {
      // A server of its own: stopping the shared one would fail the other files' tests.
      const server = await startPostgresServer();
      stopServer = () => server.destroy();
      const open = () =>
        openPostgresStore({
          url: server.url,
          secretKey: TEST_SECRET_KEY,
          bus: { heartbeatMs: 300, reconnectBaseMs: 100, reconnectMaxMs: 800 },
          // As a command opens it: a lost connection's stray rejection must not fail the run.
          connectionLoss: storeConnectionLoss,
        });
      const a = await open();
      const b = await open();
      stores.push(a, b);
      expect(b.listening).toBe(true);
      await server.stop();
      await expect.poll(() => b.listening, { timeout: 10_000 }).toBe(false);
      const lost = await a.toolsets.put('during', { name: 'during', tools: [] }).then(() => undefined, oneLine);
      expect(lost).toMatch(
        new RegExp(`^store postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${server.port}/postgres: cannot save toolsets 'during': `),
      );
      // The outage itself (a duration under test, not a wait for an event): B retries with backoff meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await server.start();
      await expect.poll(() => b.listening, { timeout: 15_000 }).toBe(true);
      const heard = nextChange(b, (change) => (change.type === 'change' && change.key === 'after' ? change : undefined));
      await a.toolsets.put('after', { name: 'after', tools: ['x.y'] });
      expect(await heard).toMatchObject({ kind: 'toolsets', op: 'put' });
      // Nothing reported failed was written.
      expect(await a.toolsets.get('during')).toBeUndefined();
      // And B hears live changes again (not only the catch-up).
      const live = nextChange(b, (change) => (change.type === 'change' && change.key === 'live' && !change.missed ? change : undefined));
      await expect
        .poll(
          async () => (
            await a.toolsets.put('live', { name: 'live', tools: [] }),
            await Promise.race([live.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))])
          ),
          {
            timeout: 15_000,
          },
        )
        .toBe(true);
    }, 60_000);
  });

  // postgres.js 3.4.9 writes to a reserved connection's socket after it is gone from a setImmediate
  // (porsager/postgres#1208): an exception nothing can catch, which ended the process. Work under
  // the lock must outlive a lost database like everything else.
  it('finishes exclusive work when Postgres goes away under it, and takes the lock again once it is back', async () => {
    const server = await startPostgresServer();
    try {
      const store = await openPostgresStore({
        url: server.url,
        secretKey: TEST_SECRET_KEY,
        listen: false,
        connectionLoss: storeConnectionLoss,
      });
      try {
        const outcome = await store.runExclusive('discover:gone', async () => {
          await server.stop();
          return 'done';
        });
        expect(outcome).toEqual({ ran: true, value: 'done' });
        await server.start();
        await expect
          .poll(() => store.runExclusive('discover:back', () => Promise.resolve('again')), { timeout: 15_000 })
          .toEqual({
            ran: true,
            value: 'again',
          });
      } finally {
        await store.close();
      }
    } finally {
      await server.destroy();
    }
  }, 60_000);
});
