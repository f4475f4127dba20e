import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ToolsetSchema } from '../../src/config/index.js';
import { mutableServer, runCli } from '../helpers/cli.js';
import {
  eventually,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';

describe('two gateways on one config dir', () => {
  let dirs: TempDirs;
  const gateways: GatewayProcess[] = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await mkdir(path.join(dirs.root, 'home'));
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
    await dirs.cleanup();
  });

  it("each saving 100 toolsets at once leaves 200 valid files, and each sees the other's at once", async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    expect((await runCli(dirs, ['refresh'])).code).toBe(0);
    gateways.push(await startGateway({ dirs }), await startGateway({ dirs }));
    const results = await Promise.all(
      gateways.flatMap((gateway, g) =>
        Array.from({ length: 100 }, (_, i) =>
          gateway.client.callTool({
            name: 'build-toolset',
            arguments: { name: `g${g}-set-${i}`, tools: ['echo.add', i % 2 ? 'echo.echo' : 'echo.pid'] },
          }),
        ),
      ),
    );
    expect(results.filter((result) => result.isError)).toEqual([]);
    const files = (await readdir(path.join(dirs.configDir, 'toolsets'))).filter((file) => file.endsWith('.yaml'));
    expect(files).toHaveLength(200);
    for (const file of files) {
      const toolset = ToolsetSchema.parse(parse(await readFile(path.join(dirs.configDir, 'toolsets', file), 'utf8')));
      expect(`${toolset.name}.yaml`).toBe(file);
    }
    const equipped = await gateways[1]!.client.callTool({ name: 'equip-toolset', arguments: { name: 'g0-set-7' } });
    expect(textOf(equipped)).toMatch(/echo_add, echo_echo/);
  });

  it('a refresh run while a gateway records its discovery keeps both changes in servers.yaml', async () => {
    const servers: Record<string, Record<string, unknown>> = {};
    for (const name of ['a1', 'a2', 'a3', 'b']) servers[name] = await mutableServer(dirs.root, name, [{ name: `${name}_one` }]);
    await writeServersYaml(dirs.configDir, servers);
    // b is known already, so the gateway discovers (and writes) only a1..a3 at its cold start.
    expect((await runCli(dirs, ['refresh', 'b'])).code).toBe(0);
    await mutableServer(dirs.root, 'b', [{ name: 'b_one' }, { name: 'b_two' }]);
    const [gateway, refresh] = await Promise.all([startGateway({ dirs, args: ['--equip', 'all'] }), runCli(dirs, ['refresh', 'b'])]);
    gateways.push(gateway);
    expect(refresh.code).toBe(0);
    await eventually(
      async () => (await gateway.client.listTools()).tools.some((tool) => tool.name === 'a3_a3_one'),
      15_000,
      'gateway discovery',
    );
    await eventually(
      async () => {
        const tools = (
          parse(await readFile(path.join(dirs.configDir, 'servers.yaml'), 'utf8')) as {
            servers: Record<string, { tools?: Record<string, unknown> }>;
          }
        ).servers;
        return (
          ['a1', 'a2', 'a3'].every((name) => tools[name]?.tools?.[`${name}_one`]) &&
          Object.keys(tools.b?.tools ?? {}).join() === 'b_one,b_two'
        );
      },
      10_000,
      "both writers' changes in servers.yaml",
    );
  });
});
