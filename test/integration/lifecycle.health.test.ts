import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  descendantsOf,
  eventually,
  fixture,
  nodeServer,
  textOf,
  useGatewaySandbox,
  writeServersYaml,
  type GatewayProcess,
} from '../helpers/gateway.js';
import { listedNames, pidOf, toolsOfFixture, writeToolCache } from '../helpers/lifecycle.js';

const FAST_HEALTH = { health_interval_seconds: 0.2, reconnect_base_seconds: 0.3, reconnect_max_seconds: 1 };

// Exactly `announced` list_changed so far: an unequip's own notice comes after any other the
// gateway still had to send, so counting at it bounds the check.
async function expectNoOtherNotice(gateway: GatewayProcess, announced: number): Promise<void> {
  await gateway.client.callTool({ name: 'unequip-toolset', arguments: {} });
  await gateway.waitForListChanged(announced + 1);
  expect(gateway.listChangedCount()).toBe(announced + 1);
}

describe('always-on server health', () => {
  const sandbox = useGatewaySandbox();

  it('withdraws a crashed server’s tools with one list_changed and restores them with one after reconnecting', async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { steady: nodeServer(fixture('crash'), { always_on: true }), other: nodeServer(fixture('echo')) },
      { gateway: FAST_HEALTH },
    );
    await writeToolCache(sandbox.dirs.dataDir, {
      steady: await toolsOfFixture(fixture('crash')),
      other: await toolsOfFixture(fixture('echo')),
    });
    const gateway = await sandbox.start();
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 1, 10_000, 'the always-on server to connect');
    const built = await gateway.client.callTool({
      name: 'build-toolset',
      arguments: { name: 'mixed', tools: ['steady.crash', 'steady.pid', 'other.echo'], equip: true },
    });
    expect(built.isError).toBeFalsy();
    expect(gateway.listChangedCount()).toBe(1);
    const before = await pidOf(gateway, 'steady');

    const crashed = await gateway.client.callTool({ name: 'steady_crash', arguments: {} });
    expect(crashed.isError).toBe(true);

    await gateway.waitForListChanged(2);
    const whileDown = await listedNames(gateway);
    // Reconnect may already be done by the time the client re-lists; withdrawal is asserted via the count.
    expect(whileDown).toContain('other_echo');
    await gateway.waitForListChanged(3);
    expect(await listedNames(gateway)).toEqual(expect.arrayContaining(['steady_crash', 'steady_pid', 'other_echo']));
    const after = await pidOf(gateway, 'steady');
    expect(after).not.toBe(before);
    await expectNoOtherNotice(gateway, 3);
  });

  it('keeps a server that fails to start withdrawn, retrying with backoff until it comes up', async () => {
    const readyFile = path.join(sandbox.dirs.root, 'may-start');
    const attemptsFile = path.join(sandbox.dirs.root, 'attempts');
    await writeServersYaml(
      sandbox.dirs.configDir,
      {
        flaky: nodeServer(fixture('crash'), { always_on: true, env: { CRASH_UNLESS_FILE: readyFile, CRASH_ATTEMPTS_FILE: attemptsFile } }),
      },
      { gateway: FAST_HEALTH },
    );
    await writeToolCache(sandbox.dirs.dataDir, { flaky: await toolsOfFixture(fixture('crash')) });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });

    await eventually(async () => !(await listedNames(gateway)).includes('flaky_echo'), 10_000, 'the failing server to be withdrawn');
    const active = textOf(await gateway.client.callTool({ name: 'get-active-toolset', arguments: {} }));
    expect(active).toContain('flaky.echo: server down');
    // Several attempts fail meanwhile; none of them announces anything new.
    const attemptsSoFar = (await readFile(attemptsFile, 'utf8')).length;
    await eventually(
      async () => (await readFile(attemptsFile, 'utf8')).length >= attemptsSoFar + 3 * 'refused\n'.length,
      10_000,
      'three more failed attempts',
    );
    const countWhileDown = gateway.listChangedCount();

    await writeFile(readyFile, 'ok');
    await gateway.waitForListChanged(countWhileDown + 1);
    expect(await listedNames(gateway)).toEqual(expect.arrayContaining(['flaky_echo', 'flaky_pid']));
    expect(textOf(await gateway.client.callTool({ name: 'flaky_echo', arguments: { text: 'back' } }))).toBe('back');
    await expectNoOtherNotice(gateway, countWhileDown + 1);
  });

  it('discovers an always-on server that was down during a cold start once it comes up', async () => {
    const readyFile = path.join(sandbox.dirs.root, 'may-start');
    await writeServersYaml(
      sandbox.dirs.configDir,
      { late: nodeServer(fixture('crash'), { always_on: true, env: { CRASH_UNLESS_FILE: readyFile } }) },
      { gateway: FAST_HEALTH },
    );
    const gateway = await sandbox.start();
    const discover = async (): Promise<string> => textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(await discover()).toContain('! late: not discovered');

    await writeFile(readyFile, 'ok');
    await eventually(async () => (await discover()).includes('late.echo'), 10_000, 'the late server to be discovered');
    expect(await discover()).not.toContain('not discovered');
  });

  it('ends a server that stops answering pings, withdraws its tools and reconnects it', async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { frozen: nodeServer(fixture('crash'), { always_on: true, timeout_seconds: 2 }) },
      { gateway: FAST_HEALTH },
    );
    await writeToolCache(sandbox.dirs.dataDir, { frozen: await toolsOfFixture(fixture('crash')) });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 1, 10_000, 'the always-on server to connect');
    const before = await pidOf(gateway, 'frozen');

    const frozen = await gateway.client.callTool({ name: 'frozen_freeze', arguments: {} });
    expect(frozen.isError).toBe(true);
    expect(textOf(frozen)).toContain("Server 'frozen' did not answer frozen.freeze within 2 s");

    await gateway.waitForListChanged(2, 20_000);
    expect(await pidOf(gateway, 'frozen')).not.toBe(before);
    expect(gateway.listChangedCount()).toBe(2);
    await eventually(async () => !(await descendantsOf(gateway.pid)).includes(before), 10_000, 'the frozen process to be ended');
  });
});
