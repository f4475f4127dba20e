import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, makeTempDirs, nodeServer, startGateway, textOf, writeServersYaml, type GatewayProcess, type TempDirs } from '../helpers/gateway.js';

describe('loadout serve over stdio', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess | undefined;
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await gateway?.close();
    await dirs.cleanup();
  });

  it('equips a toolset with exactly one list_changed and forwards a call to it', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    gateway = await startGateway({ dirs });
    const built = await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'math', tools: ['echo.add'], equip: true } });
    expect(built.isError).toBeFalsy();
    expect(gateway.listChangedCount()).toBe(1);
    const result = await gateway.client.callTool({ name: 'echo_add', arguments: { a: 2, b: 40 } });
    expect(result.structuredContent).toEqual({ sum: 42 });
    expect(textOf(result)).toBe('42');
  });
});
