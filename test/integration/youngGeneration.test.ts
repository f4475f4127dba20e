// How a command line run holds V8's young generation: `loadout search` over a few thousand cached
// tools keeps it at the size it had once loadout's code loaded, where V8 left to itself (as it is
// when the user's own node flags say how big it may be, and in `serve --http`) doubles it while
// the catalog is read. Read from the process itself as it exits.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeDefinitionCache, type CachedServerTools } from '../../src/catalog/index.js';
import { runCli } from '../helpers/cli.js';
import { fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { connectModernClient, startHttpGateway } from '../helpers/http.js';

const SERVERS = 30;
const QUERY = 'run an action on a record';
const TOOLS_PER_SERVER = 100;

// Enough definitions that reading them makes V8 grow a young generation left to itself.
function cachedServer(server: number): CachedServerTools {
  const tools = Array.from({ length: TOOLS_PER_SERVER }, (_, index) => ({
    name: `action_${index}`,
    description: `Run action ${index} of service ${server} on a record, a file or a message, and report what changed in it.`,
    inputSchema: {
      type: 'object' as const,
      properties: {
        record: { type: 'string', description: `The record action ${index} works on` },
        limit: { type: 'number', description: 'How many results at most' },
      },
      required: ['record'],
    },
  }));
  return { discoveredAt: '2026-01-01T00:00:00.000Z', tools };
}

describe('the young generation of a command line run', () => {
  const sandbox = useGatewaySandbox();

  it('loadout search and serve over stdio hold it; a semi-space flag of the user, and serve --http, let V8 grow it', async () => {
    const names = Array.from({ length: SERVERS }, (_, index) => `service${index}`);
    await writeServersYaml(sandbox.dirs.configDir, Object.fromEntries(names.map((name) => [name, nodeServer(fixture('echo'))])));
    await writeDefinitionCache(
      path.join(sandbox.dirs.dataDir, 'catalog.json'),
      Object.fromEntries(names.map((name, index) => [name, cachedServer(index)])),
    );
    const probed = (nodeOptions: string) => {
      const log = path.join(sandbox.dirs.root, 'young-generation.json');
      const env = { NODE_OPTIONS: `--import=${fixture('youngGenerationProbe')} ${nodeOptions}`, LOADOUT_TEST_YOUNG_GENERATION_LOG: log };
      return { env, read: async () => (JSON.parse(await readFile(log, 'utf8')) as { atExitBytes: number }).atExitBytes };
    };
    const search = async (nodeOptions: string) => {
      const { env, read } = probed(nodeOptions);
      const run = await runCli(sandbox.dirs, ['search', 'run', 'an', 'action', 'on', 'a', 'record'], { env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('.action_');
      return read();
    };

    const held = await search('');
    const grown = await search('--max-semi-space-size=16');
    expect(held).toBeLessThan(grown);

    // A gateway reading the same catalog and answering the same search: over stdio (one agent per
    // process) it is held too; over HTTP (many callers at once) it is left to V8.
    const overStdio = probed('');
    const gateway = await sandbox.start({ env: overStdio.env });
    expect(textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: QUERY } }))).toContain('action_');
    await gateway.close();
    expect(await overStdio.read()).toBeLessThan(grown);

    const overHttp = probed('');
    const served = await startHttpGateway(sandbox.dirs, [], overHttp.env);
    try {
      const client = await connectModernClient(served.url);
      expect(textOf(await client.callTool({ name: 'discover-all-tools', arguments: { query: QUERY } }))).toContain('action_');
      await client.close();
    } finally {
      await served.close();
    }
    expect(await overHttp.read()).toBeGreaterThan(held);
  });
});
