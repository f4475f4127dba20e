// Equip answers as each kind of client needs them: held for the re-read of a client that re-lists
// (Claude Code), answered at once with the call-tool hint for one that has shown it does not
// (Codex CLI by default), and never held for a client known to re-list only after the answer.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, makeTempDirs, nodeServer, startGateway, textOf, writeServersYaml } from '../helpers/gateway.js';
import type { GatewayProcess, StartOptions, TempDirs } from '../helpers/gateway.js';

const RELIST_WAIT_MS = 1500;

describe('equip answers and the client re-reading tools/list', () => {
  let dirs: TempDirs;
  const gateways: GatewayProcess[] = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: RELIST_WAIT_MS } });
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
    await dirs.cleanup();
  });
  const start = async (options: Omit<StartOptions, 'dirs'>): Promise<GatewayProcess> => {
    const gateway = await startGateway({ dirs, ...options });
    gateways.push(gateway);
    return gateway;
  };
  const timedEquip = async (gateway: GatewayProcess, name: string, tool: string): Promise<{ ms: number; text: string }> => {
    const startedMs = performance.now();
    const result = await gateway.client.callTool({ name: 'build-toolset', arguments: { name, tools: [tool], equip: true } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return { ms: performance.now() - startedMs, text: textOf(result) };
  };

  it('stops holding equip answers once the client has let one hold run out without re-reading', async () => {
    const gateway = await start({ relistOnChange: false });
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const first = await timedEquip(gateway, 'talk', 'echo.echo');
    expect(first.ms).toBeGreaterThanOrEqual(RELIST_WAIT_MS - 50);
    expect(first.text).toContain('Your client does not re-read its tool list, so call them with call-tool');
    const second = await timedEquip(gateway, 'math', 'echo.add');
    expect(second.ms).toBeLessThan(RELIST_WAIT_MS / 2);
    expect(second.text).toContain('Your client does not re-read its tool list, so call them with call-tool');
    expect(gateway.listChangedCount()).toBe(2);
    // call-tool reaches the equipped tool without the list.
    const called = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo_add', arguments: { a: 1, b: 2 } } });
    expect(textOf(called)).toBe('3');
  });

  it('keeps holding for a client that re-reads each time', async () => {
    const gateway = await start({});
    for (const [name, tool] of [
      ['talk', 'echo.echo'],
      ['math', 'echo.add'],
      ['env', 'echo.env'],
    ] as const) {
      const equip = await timedEquip(gateway, name, tool);
      expect(equip.ms).toBeLessThan(RELIST_WAIT_MS - 50);
      expect(equip.text).toContain('If they do not appear in your tool list');
    }
    expect(gateway.listChangedCount()).toBe(3);
  });

  it('never holds for a client known to re-read only after the answer (Codex CLI)', async () => {
    const gateway = await start({ relistOnChange: false, clientName: 'codex-mcp-client' });
    // Discovery done first, so the time measured is the equip's own.
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const first = await timedEquip(gateway, 'talk', 'echo.echo');
    expect(first.ms).toBeLessThan(RELIST_WAIT_MS / 2);
    expect(first.text).toContain('If they do not appear in your tool list');
  });
});
