// /healthz of a store-mode replica tells a load balancer when it cannot hear the other replicas:
// 503 naming the store (password masked) while Postgres is away and its listening connection is
// being re-opened, 200 again once it listens. (Files mode answers 200 always: http.security.test.ts.)
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, fixture, makeTempDirs, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { connectModernClient, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { createDatabase } from '../helpers/postgres.js';
import { startPostgresServer } from '../helpers/postgresServer.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

async function health(replica: ListeningProcess): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(new URL('/healthz', replica.url));
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe('/healthz of a store-mode replica', () => {
  it('answers 503 naming the store while the replica is not listening to it, and 200 once it listens again', async () => {
    const server = await startPostgresServer();
    const dirs = await makeTempDirs();
    let replica: ListeningProcess | undefined;
    try {
      const database = await createDatabase(server.url);
      await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
      replica = await startHttpGateway({ configDir: dirs.configDir, dataDir: path.join(dirs.root, 'data') }, ['--store', database.url], {
        LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
      });
      expect(await health(replica)).toEqual({ status: 200, body: { status: 'ok' } });
      // Start-up discovery is over once a toolset of its tools is saved: Postgres is stopped with no
      // store work under way (postgres.js 3.4.9 can crash the process on a connection closed mid-write).
      const client = await connectModernClient(replica.url);
      const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
      expect(built.isError, textOf(built)).toBeFalsy();
      await client.close();

      await server.stop();
      let down: { status: number; body: Record<string, string> } | undefined;
      await eventually(async () => (down = await health(replica!)).status === 503, 20_000, '/healthz to answer 503');
      const masked = database.url.replace(/:[^:@/]*@/, ':***@');
      expect(down!.body).toMatchObject({ status: 'not-listening', store: masked });
      expect(down!.body.reason).toContain(`not listening to store ${masked}`);
      expect(JSON.stringify(down!.body)).not.toContain(new URL(database.url).password);

      await server.start();
      await eventually(async () => (await health(replica!)).status === 200, 30_000, '/healthz to answer 200 again');
      expect(await health(replica)).toEqual({ status: 200, body: { status: 'ok' } });
    } finally {
      await replica?.close();
      await dirs.cleanup();
      await server.destroy();
    }
  });
});
