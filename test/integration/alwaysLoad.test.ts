// Claude Code (2.1.332 and later) defers MCP tools behind its own tool search, except a tool
// listed with `_meta["anthropic/alwaysLoad"]: true`. loadout's meta-tools and the tools of an
// equipped toolset carry that mark in tools/list, so the agent sees them without a search.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { META_TOOL_NAMES, fixture, nodeServer, rawToolsOf, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';

const ALWAYS_LOAD = 'anthropic/alwaysLoad';

describe('tools/list for clients with tool search', () => {
  const sandbox = useGatewaySandbox();

  it('marks every meta-tool, and an equipped tool (keeping its own _meta) once it is equipped', async () => {
    const toolsFile = path.join(sandbox.dirs.root, 'tools.json');
    await writeFile(
      toolsFile,
      JSON.stringify([{ name: 'plain' }, { name: 'tagged', _meta: { 'vendor/origin': 'kept', [ALWAYS_LOAD]: false } }]),
    );
    await writeServersYaml(sandbox.dirs.configDir, { m: nodeServer(fixture('mutable'), { args: [fixture('mutable'), toolsFile] }) });
    const gateway = await sandbox.start();

    const idle = await rawToolsOf(gateway.client);
    expect(idle.map((tool) => tool.name)).toEqual(META_TOOL_NAMES);
    for (const tool of idle) expect(tool._meta, tool.name).toEqual({ [ALWAYS_LOAD]: true });

    const built = await gateway.client.callTool({
      name: 'build-toolset',
      arguments: { name: 'pair', tools: ['m.plain', 'm.tagged'], equip: true },
    });
    expect(built.isError, textOf(built)).toBeFalsy();
    const equipped = (await rawToolsOf(gateway.client)).filter((tool) => !META_TOOL_NAMES.includes(tool.name));
    expect(equipped).toEqual([
      { name: 'm_plain', description: 'The plain tool.', inputSchema: { type: 'object', properties: {} }, _meta: { [ALWAYS_LOAD]: true } },
      {
        name: 'm_tagged',
        description: 'The tagged tool.',
        inputSchema: { type: 'object', properties: {} },
        _meta: { 'vendor/origin': 'kept', [ALWAYS_LOAD]: true },
      },
    ]);
    expect(textOf(await gateway.client.callTool({ name: 'm_plain', arguments: {} }))).toBe('plain');
  });

  it('leaves the tools of `all` (a plain proxy) as the servers list them', async () => {
    const toolsFile = path.join(sandbox.dirs.root, 'tools.json');
    await writeFile(toolsFile, JSON.stringify([{ name: 'plain' }]));
    await writeServersYaml(sandbox.dirs.configDir, { m: nodeServer(fixture('mutable'), { args: [fixture('mutable'), toolsFile] }) });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const tools = await rawToolsOf(gateway.client);
    const plain = tools.find((tool) => tool.name === 'm_plain');
    expect(plain).toEqual({ name: 'm_plain', description: 'The plain tool.', inputSchema: { type: 'object', properties: {} } });
    for (const tool of tools.filter(({ name }) => META_TOOL_NAMES.includes(name))) expect(tool._meta).toEqual({ [ALWAYS_LOAD]: true });
  });
});
