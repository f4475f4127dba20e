import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  descendantsOf,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';
import { cachedTool, callThrough, writeToolCache } from '../helpers/lifecycle.js';

const SECRET = 'sk-loadout-test-7f3a9c2e';

describe('${VAR} expansion at spawn', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess | undefined;
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await dirs.cleanup();
  });

  it('fails the start of a server whose variable is missing, naming the variable, and spawns nothing', async () => {
    await writeServersYaml(dirs.configDir, {
      needy: nodeServer(fixture('echo'), { env: { API_TOKEN: '${LOADOUT_TEST_UNSET_TOKEN}' } }),
    });
    await writeToolCache(dirs.dataDir, { needy: [cachedTool('env')] });
    gateway = await startGateway({ dirs });

    const result = await callThrough(gateway, 'needy.env', { name: 'API_TOKEN' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Server 'needy'");
    expect(textOf(result)).toContain('LOADOUT_TEST_UNSET_TOKEN is not set');
    expect(await descendantsOf(gateway.pid)).toEqual([]);
  });

  it('hands the expanded value to the server but never writes or logs it', async () => {
    const serversFile = await writeServersYaml(dirs.configDir, {
      keyed: nodeServer(fixture('echo'), {
        env: { API_TOKEN: '${LOADOUT_TEST_SECRET}', REGION: '${LOADOUT_TEST_REGION:-eu-west}' },
        args: [fixture('echo'), '--token=${LOADOUT_TEST_SECRET}'],
      }),
    });
    const yamlBefore = await readFile(serversFile, 'utf8');
    // Cold start: discovery spawns the server and writes the cache.
    gateway = await startGateway({ dirs, env: { LOADOUT_TEST_SECRET: SECRET }, args: ['--log-level', 'debug'] });

    expect(textOf(await callThrough(gateway, 'keyed.env', { name: 'API_TOKEN' }))).toBe(SECRET);
    expect(textOf(await callThrough(gateway, 'keyed.env', { name: 'REGION' }))).toBe('eu-west');
    await gateway.close();

    const yamlAfter = await readFile(serversFile, 'utf8');
    expect(yamlAfter).toBe(yamlBefore);
    expect(yamlAfter).toContain('${LOADOUT_TEST_SECRET}');
    expect(await readFile(path.join(dirs.dataDir, 'catalog.json'), 'utf8')).not.toContain(SECRET);
    const log = gateway.stderr();
    expect(log).toContain('server started');
    expect(log).not.toContain(SECRET);
    gateway = undefined;
  });
});
