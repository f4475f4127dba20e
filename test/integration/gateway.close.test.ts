// A gateway whose close has resolved writes nothing more: the owner (a test removing its temp
// dir, a user moving the data dir) may act on the files at once. A background discovery that has
// listed its server but not yet written the catalog is the case that broke this: close returned,
// and catalog.json, servers.yaml and server-map.json landed afterwards.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readTextIfExists, withFileLock } from '../../src/config/index.js';
import { fixture, nodeServer, useInProcessGateway, writeServersYaml } from '../helpers/gateway.js';

describe('closing the gateway', () => {
  const sandbox = useInProcessGateway();

  it('resolves only after a discovery under way has written the catalog', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const { paths } = sandbox;

    // Hold catalog.json's lock, as another loadout process writing it would: discovery's write waits for it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      void withFileLock(paths.catalogCacheFile, () => {
        resolve();
        return new Promise<void>((done) => (release = done));
      });
    });
    await held;

    const gateway = await sandbox.start();
    const { pool } = gateway.context;
    // Discovery stops the lazy server once it has listed it, and then writes what it listed.
    const listed = new Promise<void>((resolve) =>
      pool.onEvent((event) => event.type === 'stopped' && event.server === 'echo' && resolve()),
    );
    void gateway.context.ready();
    await listed;

    let closed = false;
    const closing = gateway.close().then(() => (closed = true));
    // Give close every chance to finish without the write: the pool it ends is closed, and a few turns pass.
    await pool.close();
    for (let turn = 0; turn < 5; turn++) await nextTurn();
    expect(closed).toBe(false);

    release();
    await closing;
    expect(await readTextIfExists(paths.catalogCacheFile)).toContain('"echo"');
  });
});
