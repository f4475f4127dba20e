// Discovery of servers the catalog lacks stays off the agent's path: the first discover-all-tools
// does not wait for a server that never answers, a server that failed is not tried again by the
// next start until its backoff is over (remembered in the data dir), and both states show in
// discover-all-tools and `loadout status`.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadServersFile } from '../../src/config/index.js';
import { discoveryRecordsOf, recordDiscoveryOutcomes } from '../../src/runtime/index.js';
import { runCli } from '../helpers/cli.js';
import { cachedTool, writeToolCache } from '../helpers/lifecycle.js';
import { descendantsOf, eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';

// Far below the 30 s discovery timeout a waiting start would take, far above a start that does not wait.
const PROMPT_MS = 15_000;

type StatusJson = { servers: Array<{ name: string; discovery: { state: string; retryAt?: string; error?: string } | null }> };

describe('discovery in the background', () => {
  const sandbox = useGatewaySandbox();

  it('answers the first discover-all-tools with the good server while one that never answers is pending', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      stuck: nodeServer(fixture('hang'), { env: { HANG_ON_START: '1' } }),
    });
    const gateway = await sandbox.start();

    const startedAt = Date.now();
    const discovered = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(Date.now() - startedAt).toBeLessThan(PROMPT_MS);
    expect(discovered).toContain('echo.echo');
    expect(discovered).toMatch(/^! stuck: discovery pending since \d\d:\d\d:\d\d; its tools join the catalog when it answers\.$/m);
    const call = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'stuck.echo', arguments: {} } });
    expect(call.isError).toBe(true);
    expect(textOf(call)).toMatch(/No tool 'stuck.echo' is known yet: stuck: discovery pending/);

    const status = JSON.parse((await runCli(sandbox.dirs, ['status', '--json'])).stdout) as StatusJson;
    expect(status.servers.find((server) => server.name === 'stuck')?.discovery).toEqual({ state: 'pending' });
    expect(status.servers.find((server) => server.name === 'echo')?.discovery).toBeNull();

    // Still unanswered when loadout stops: the next start does not wait for it again.
    await gateway.close();
    const records = await readFile(path.join(sandbox.dirs.dataDir, 'discovery.json'), 'utf8');
    expect(records).toMatch(/Server 'stuck' had not answered its discovery \d+ s after it began, when loadout stopped/);
    const next = await sandbox.start();
    const again = textOf(await next.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(again).toMatch(/^! stuck: not discovered: failed at .+, next try in \d+ s\. Server 'stuck' had not answered/m);
    expect(await descendantsOf(next.pid)).toEqual([]);
  });

  it('does not try a server that just failed again at the next start, and says when it will', async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { echo: nodeServer(fixture('echo')), stuck: nodeServer(fixture('hang'), { env: { HANG_ON_START: '1' } }) },
      { gateway: { discovery_timeout_seconds: 2 } },
    );
    await writeToolCache(sandbox.dirs.dataDir, { echo: [cachedTool('echo')] });
    const first = await sandbox.start();
    const recordsFile = path.join(sandbox.dirs.dataDir, 'discovery.json');
    await first.client.callTool({ name: 'discover-all-tools', arguments: {} });
    await eventually(async () => (await readFile(recordsFile, 'utf8').catch(() => '')).includes('"stuck"'), 10_000, 'the failure record');
    await first.close();

    const second = await sandbox.start();
    const discovered = textOf(await second.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(discovered).toContain('echo.echo');
    expect(discovered).toMatch(
      /^! stuck: not discovered: failed at \d\d:\d\d:\d\d \(1 attempt in a row\), next try in \d+ s\. Server 'stuck' failed to start: it did not answer the MCP handshake \(initialize\) within 2 s$/m,
    );
    // Nothing was spawned: echo is cached, stuck waits out its backoff.
    expect(await descendantsOf(second.pid)).toEqual([]);

    const human = await runCli(sandbox.dirs, ['status']);
    expect(human.stdout).toMatch(/^stuck +stdio +lazy +5 min +no +failed/m);
    expect(human.stdout).toMatch(/^stuck: discovery failed at \d\d:\d\d:\d\d \(1 attempt in a row\), next try in \d+ s/m);
    const json = JSON.parse((await runCli(sandbox.dirs, ['status', '--json'])).stdout) as StatusJson;
    expect(json.servers.find((server) => server.name === 'stuck')?.discovery).toMatchObject({
      state: 'failed',
      code: 'SERVER_START_FAILED',
      error: expect.stringContaining('did not answer the MCP handshake') as unknown,
    });
  });

  it('tries a server again in the background once its wait is over, and forgets the failure when it answers', async () => {
    const serversFile = await writeServersYaml(sandbox.dirs.configDir, { late: nodeServer(fixture('echo')) });
    const recordsFile = path.join(sandbox.dirs.dataDir, 'discovery.json');
    const { config } = await loadServersFile(serversFile);
    await recordDiscoveryOutcomes(
      await discoveryRecordsOf({ dataDir: sandbox.dirs.dataDir, toolsetsDir: path.join(sandbox.dirs.configDir, 'toolsets') }, undefined),
      config.servers,
      [{ server: 'late', ok: false, failure: { code: 'SERVER_START_FAILED', text: 'it failed an hour ago' } }],
      Date.now() - 3_600_000,
    );
    const gateway = await sandbox.start();

    const discover = async (): Promise<string> => textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(await discover()).toMatch(/! late: (not discovered|discovery pending)/);
    await eventually(async () => (await discover()).includes('late.echo'), 10_000, 'the retry to discover late');
    expect(await discover()).not.toMatch(/! late/);
    await eventually(async () => !(await readFile(recordsFile, 'utf8')).includes('"late"'), 10_000, 'the record to be dropped');
  });
});
