import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantsOf, eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { cachedTool, listedNames, pidOf, writeToolCache } from '../helpers/lifecycle.js';

describe('gateway start-up', () => {
  const sandbox = useGatewaySandbox();
  let http: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
    http = undefined;
  });

  it('answers tools/list and discover-all-tools from a warm cache with no child process and no network request', async () => {
    let httpRequests = 0;
    http = createServer((_request, response) => {
      httpRequests++;
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve));
    const port = (http.address() as AddressInfo).port;
    await writeServersYaml(sandbox.dirs.configDir, {
      alpha: nodeServer(fixture('echo')),
      beta: nodeServer(fixture('echo')),
      remote: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
    });
    await writeToolCache(sandbox.dirs.dataDir, {
      alpha: [cachedTool('echo'), cachedTool('pid')],
      beta: [cachedTool('echo')],
      remote: [cachedTool('search')],
    });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });

    const names = await listedNames(gateway);
    expect(names).toEqual(expect.arrayContaining(['alpha_echo', 'alpha_pid', 'beta_echo', 'remote_search']));
    const discovered = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(discovered).toContain('4 tools');
    expect(discovered).toContain('remote.search');
    expect(discovered).not.toContain('not discovered');

    expect(await descendantsOf(gateway.pid)).toEqual([]);
    expect(httpRequests).toBe(0);
  });

  it('re-equips the remembered toolset at a warm start without spawning anything or rewriting state.json', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { alpha: nodeServer(fixture('echo')) });
    await writeToolCache(sandbox.dirs.dataDir, { alpha: [cachedTool('echo')] });
    const stateFile = path.join(sandbox.dirs.dataDir, 'state.json');
    await writeFile(stateFile, JSON.stringify({ version: 1, activeToolset: 'all' }));
    const before = await stat(stateFile);
    const gateway = await sandbox.start();

    expect(await listedNames(gateway)).toContain('alpha_echo');
    expect(await descendantsOf(gateway.pid)).toEqual([]);
    expect((await stat(stateFile)).mtimeMs).toBe(before.mtimeMs);
  });

  it('lists an always-on server from the cache while it is still starting in the background', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      stuck: nodeServer(fixture('hang'), { always_on: true, env: { HANG_ON_START: '1' } }),
    });
    await writeToolCache(sandbox.dirs.dataDir, { stuck: [cachedTool('echo')] });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });

    expect(await listedNames(gateway)).toContain('stuck_echo');
    // The background start has spawned the server, though its handshake never completes.
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 1, 10_000, 'the always-on server to be spawned');
    expect(await listedNames(gateway)).toContain('stuck_echo');
  });

  it('discovers a cold start concurrently, skips the failing servers, keeps only always-on servers running', async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      {
        lazy: nodeServer(fixture('echo')),
        kept: nodeServer(fixture('echo'), { always_on: true }),
        broken: nodeServer(path.join(sandbox.dirs.root, 'no-such-server.js')),
        stuck: nodeServer(fixture('hang'), { env: { HANG_ON_START: '1' } }),
      },
      { gateway: { discovery_timeout_seconds: 6, discovery_concurrency: 2 } },
    );
    const gateway = await sandbox.start();

    const discovered = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { limit: 100 } }));
    expect(discovered).toContain('lazy.echo');
    expect(discovered).toContain('kept.add');
    expect(discovered).toMatch(/! broken: not discovered/);
    // The first answer does not wait out the discovery timeout of a server that never answers.
    expect(discovered).toMatch(/! stuck: (discovery pending|not discovered)/);

    // Lazy servers (and the one that timed out) are stopped again; the always-on one stays.
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 1, 10_000, 'only the always-on server to remain');
    expect(await descendantsOf(gateway.pid)).toEqual([await pidOf(gateway, 'kept')]);

    const cache = JSON.parse(await readFile(path.join(sandbox.dirs.dataDir, 'catalog.json'), 'utf8')) as {
      servers: Record<string, unknown>;
    };
    expect(Object.keys(cache.servers).sort()).toEqual(['kept', 'lazy']);
  });
});
