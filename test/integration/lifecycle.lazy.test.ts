import { describe, expect, it } from 'vitest';
import { descendantsOf, eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { cachedTool, callThrough, listedNames, pidOf, toolsOfFixture, writeToolCache } from '../helpers/lifecycle.js';

describe('lazy servers', () => {
  const sandbox = useGatewaySandbox();

  it('starts on the first call, and N concurrent first calls share one child process', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    await writeToolCache(sandbox.dirs.dataDir, { echo: [cachedTool('pid'), cachedTool('echo')] });
    const gateway = await sandbox.start();
    expect(await descendantsOf(gateway.pid)).toHaveLength(0);

    const results = await Promise.all(Array.from({ length: 8 }, () => callThrough(gateway, 'echo.pid')));
    const pids = new Set(results.map((result) => textOf(result)));
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(pids.size).toBe(1);
    expect(await descendantsOf(gateway.pid)).toEqual([Number([...pids][0])]);
  });

  it('stops after idle_timeout_minutes with no call in flight, and starts again on the next call', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo'), { idle_timeout_minutes: 0.02 }) });
    await writeToolCache(sandbox.dirs.dataDir, { echo: [cachedTool('pid')] });
    const gateway = await sandbox.start();

    const first = await pidOf(gateway, 'echo');
    expect(await descendantsOf(gateway.pid)).toEqual([first]);
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 0, 10_000, 'the idle server to stop');

    const second = await pidOf(gateway, 'echo');
    expect(second).not.toBe(first);
    expect(await descendantsOf(gateway.pid)).toEqual([second]);
  });

  it('is never stopped while a call is in flight, even one longer than the idle timeout', async () => {
    // idle timeout 0.3 s; the call takes 2 s and would fail ("closed the connection") if stopped.
    await writeServersYaml(sandbox.dirs.configDir, { slow: nodeServer(fixture('slow'), { idle_timeout_minutes: 0.005 }) });
    await writeToolCache(sandbox.dirs.dataDir, { slow: [cachedTool('sleep')] });
    const gateway = await sandbox.start();

    const call = callThrough(gateway, 'slow.sleep', { ms: 2000 });
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 1, 10_000, 'the server to start');
    // Stopped mid-call, the server would end the call with "closed the connection" instead.
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('slept 2000 ms');
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 0, 10_000, 'the idle server to stop after the call');
  });

  it('restarts a crashed lazy server on the next call without withdrawing its tools', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { crashy: nodeServer(fixture('crash')) });
    await writeToolCache(sandbox.dirs.dataDir, { crashy: await toolsOfFixture(fixture('crash')) });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const before = Number(textOf(await gateway.client.callTool({ name: 'crashy_pid', arguments: {} })));

    const crashed = await gateway.client.callTool({ name: 'crashy_crash', arguments: {} });
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toContain("Server 'crashy'");

    const after = await gateway.client.callTool({ name: 'crashy_pid', arguments: {} });
    expect(after.isError).toBeFalsy();
    expect(Number(textOf(after))).not.toBe(before);
    expect(await listedNames(gateway)).toEqual(expect.arrayContaining(['crashy_crash', 'crashy_pid']));
    expect(gateway.listChangedCount()).toBe(0);
  });
});
