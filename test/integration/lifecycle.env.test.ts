import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { descendantsOf, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { cachedTool, callThrough, writeToolCache } from '../helpers/lifecycle.js';

const SECRET = 'sk-loadout-test-7f3a9c2e';

describe('${VAR} expansion at spawn', () => {
  const sandbox = useGatewaySandbox();

  it('fails the start of a server whose variable is missing, naming the variable, and spawns nothing', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      needy: nodeServer(fixture('echo'), { env: { API_TOKEN: '${LOADOUT_TEST_UNSET_TOKEN}' } }),
    });
    await writeToolCache(sandbox.dirs.dataDir, { needy: [cachedTool('env')] });
    const gateway = await sandbox.start();

    const result = await callThrough(gateway, 'needy.env', { name: 'API_TOKEN' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Server 'needy'");
    expect(textOf(result)).toContain('LOADOUT_TEST_UNSET_TOKEN is not set');
    expect(await descendantsOf(gateway.pid)).toEqual([]);
  });

  it('hands the expanded value to the server but never writes or logs it', async () => {
    const serversFile = await writeServersYaml(sandbox.dirs.configDir, {
      keyed: nodeServer(fixture('echo'), {
        env: { API_TOKEN: '${LOADOUT_TEST_SECRET}', REGION: '${LOADOUT_TEST_REGION:-eu-west}' },
        args: [fixture('echo'), '--token=${LOADOUT_TEST_SECRET}'],
      }),
    });
    // Cold start: discovery spawns the server and writes the cache.
    const gateway = await sandbox.start({ env: { LOADOUT_TEST_SECRET: SECRET }, args: ['--log-level', 'debug'] });

    expect(textOf(await callThrough(gateway, 'keyed.env', { name: 'API_TOKEN' }))).toBe(SECRET);
    expect(textOf(await callThrough(gateway, 'keyed.env', { name: 'REGION' }))).toBe('eu-west');
    await gateway.close();

    // Discovery records the tools in servers.yaml; the server's own lines stay as written.
    const yamlAfter = await readFile(serversFile, 'utf8');
    expect(yamlAfter).not.toContain(SECRET);
    expect(yamlAfter).toContain('API_TOKEN: ${LOADOUT_TEST_SECRET}');
    expect(yamlAfter).toContain('--token=${LOADOUT_TEST_SECRET}');
    expect(yamlAfter).toContain('REGION: ${LOADOUT_TEST_REGION:-eu-west}');
    expect(await readFile(path.join(sandbox.dirs.dataDir, 'catalog.json'), 'utf8')).not.toContain(SECRET);
    const log = gateway.stderr();
    expect(log).toContain('server started');
    expect(log).not.toContain(SECRET);
  });
});
