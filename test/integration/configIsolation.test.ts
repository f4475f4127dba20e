// Two config dirs never share state: `--config DIR` without `--data` gets a data dir of its own,
// and a data dir that already holds another config dir's state is refused with one readable line.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, fixture, makeTempDirs, nodeServer, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { linesOf, runCli } from '../helpers/cli.js';

// `loadout serve --config DIR` with HOME in the temp root and no --data, as a user would run it.
async function serveWithoutData(root: string, configDir: string): Promise<Client> {
  const home = path.join(root, 'home');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), HOME: home, XDG_DATA_HOME: '', XDG_CONFIG_HOME: '' };
  delete env.LOADOUT_DATA_DIR;
  delete env.LOADOUT_CONFIG_DIR;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--config', configDir],
    env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'loadout-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('config dirs are isolated', () => {
  let dirs: TempDirs;
  const clients: Client[] = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await dirs.cleanup();
  });

  it('a gateway on config B does not list a tool cached for the same-named server of config A (no --data)', async () => {
    const configA = path.join(dirs.root, 'a');
    const configB = path.join(dirs.root, 'b');
    await mkdir(configA);
    await mkdir(configB);
    // The same server name in both, different servers behind it.
    await writeServersYaml(configA, { tools: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'a_' } }) });
    await writeServersYaml(configB, { tools: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'b_' } }) });

    const onA = await serveWithoutData(dirs.root, configA);
    clients.push(onA);
    expect(textOf(await onA.callTool({ name: 'discover-all-tools', arguments: {} }))).toContain('tools.a_echo');
    await onA.close();

    const onB = await serveWithoutData(dirs.root, configB);
    clients.push(onB);
    const catalog = textOf(await onB.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(catalog).toContain('tools.b_echo');
    expect(catalog).not.toContain('a_echo');
    const forwarded = await onB.callTool({ name: 'call-tool', arguments: { tool: 'tools.a_echo', arguments: { text: 'leak' } } });
    expect(forwarded.isError).toBe(true);
  });

  it('refuses a --data dir that holds another config dir state, in one line naming both', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    expect((await runCli(dirs, ['list', '--json'])).code).toBe(0);
    const other = path.join(dirs.root, 'other-config');
    await mkdir(other);
    await writeServersYaml(other, {});
    const run = await runCli({ ...dirs, configDir: other }, ['list', '--json']);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`holds the state of config dir ${dirs.configDir}`);
    expect(run.stderr).toContain(other);
  });

  it('adopts a data dir whose config dir was moved away, in one line on stderr, and keeps its catalog', async () => {
    const before = path.join(dirs.root, 'config-before-move');
    await mkdir(before);
    await writeServersYaml(before, { echo: nodeServer(fixture('echo')) });
    expect((await runCli({ ...dirs, configDir: before }, ['refresh'])).code).toBe(0);
    await rm(dirs.configDir, { recursive: true });
    await rename(before, dirs.configDir);
    const run = await runCli(dirs, ['list', '--json']);
    expect(run.code).toBe(0);
    expect(linesOf(run.stderr)).toEqual([
      `loadout: data dir ${dirs.dataDir} belonged to config dir ${before}, which no longer exists; it now belongs to ${dirs.configDir}`,
    ]);
    expect((JSON.parse(run.stdout) as Array<{ id: string }>).map((tool) => tool.id)).toContain('echo.echo');
    expect(await readFile(path.join(dirs.dataDir, 'config-dir'), 'utf8')).toBe(`${dirs.configDir}\n`);
    expect((await runCli(dirs, ['list', '--json'])).stderr).toBe('');
  });

  it('refuses a data dir whose owner record cannot be read, in one line naming it, and leaves it as it was', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const ownerRecord = path.join(dirs.dataDir, 'config-dir');
    await mkdir(ownerRecord, { recursive: true });
    const run = await runCli(dirs, ['list', '--json']);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`cannot read ${ownerRecord}`);
    expect((await stat(ownerRecord)).isDirectory()).toBe(true);
  });
});
