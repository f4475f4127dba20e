// A servers.yaml that does not parse (an indentation typo) never stops `serve`: it serves the
// last good parse the data dir keeps (or no servers, without one) and says so with file:line:col
// in the instructions and first in every meta-tool answer; doctor and status say it too, and a
// fix while serving is picked up and the notice goes.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { eventually, fixture, makeTempDirs, startGateway, type GatewayProcess, type TempDirs } from '../helpers/gateway.js';

const echoEntry = (indent: string) =>
  `servers:\n  echo:\n    command: ${JSON.stringify(process.execPath)}\n${indent}args: [${JSON.stringify(fixture('echo'))}]\n`;
const GOOD = echoEntry('    ');
// `args` one column short of `command`: the whole file fails to parse, at line 4.
const BROKEN = echoEntry('   ');

type Content = Array<{ type: string; text?: string }>;
const firstLine = (result: { content?: unknown }): string => (result.content as Content)[0]?.text ?? '';
const allText = (result: { content?: unknown }): string => (result.content as Content).map((block) => block.text ?? '').join('\n');
// The answer itself, after the notice.
const answerText = (result: { content?: unknown }): string => allText({ content: (result.content as Content).slice(1) });

describe('a servers.yaml that does not parse', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess | undefined;
  const file = () => path.join(dirs.configDir, 'servers.yaml');
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await dirs.cleanup();
  });

  it('is served from its last good parse, said in the instructions and first in each meta-tool answer, until a fix clears it', async () => {
    await writeFile(file(), GOOD);
    expect((await runCli(dirs, ['list'])).code).toBe(0);
    await writeFile(file(), BROKEN);
    gateway = await startGateway({ dirs });
    const where = `${file()}:4:`;
    expect(gateway.client.getInstructions()).toMatch(
      /^servers\.yaml does not parse \(.*servers\.yaml:4:\d+: .*\); loadout serves its last good parse/,
    );
    expect(gateway.client.getInstructions()).toContain(where);
    const called = await gateway.client.callTool({
      name: 'call-tool',
      arguments: { tool: 'echo.echo', arguments: { text: 'still served' } },
    });
    expect(firstLine(called)).toContain('loadout serves its last good parse');
    expect(allText(called)).toContain('still served');
    const map = await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    expect(firstLine(map)).toContain(where);
    expect(answerText(map)).toContain('echo.echo');
    expect(gateway.stderr()).toContain(where);

    await writeFile(file(), GOOD);
    await eventually(
      async () => !firstLine(await gateway!.client.callTool({ name: 'discover-all-tools', arguments: {} })).includes('does not parse'),
      10_000,
      'the notice to go once servers.yaml is fixed',
    );
    const after = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'fixed' } } });
    expect(allText(after)).not.toContain('does not parse');
  });

  it('serves no servers without a good parse, and says so; a fix starts serving them', async () => {
    await writeFile(file(), BROKEN);
    gateway = await startGateway({ dirs });
    expect(gateway.client.getInstructions()).toMatch(
      /^servers\.yaml does not parse \(.*servers\.yaml:4:\d+: .*\); loadout serves no servers/,
    );
    const map = await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    expect(firstLine(map)).toContain('loadout serves no servers');
    expect(answerText(map)).not.toContain('echo');
    await writeFile(file(), GOOD);
    await eventually(
      async () => allText(await gateway!.client.callTool({ name: 'discover-all-tools', arguments: {} })).includes('echo.echo'),
      10_000,
      'echo to be served once servers.yaml is fixed',
    );
    const called = await gateway.client.callTool({
      name: 'call-tool',
      arguments: { tool: 'echo.echo', arguments: { text: 'now served' } },
    });
    expect(allText(called)).toBe('now served');
  });

  it('breaking it while serving keeps what is served and adds the notice', async () => {
    await writeFile(file(), GOOD);
    gateway = await startGateway({ dirs });
    expect(gateway.client.getInstructions()).not.toContain('does not parse');
    await writeFile(file(), BROKEN);
    await eventually(
      async () => firstLine(await gateway!.client.callTool({ name: 'discover-all-tools', arguments: {} })).includes(`${file()}:4:`),
      10_000,
      'the notice once servers.yaml breaks',
    );
    const called = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'kept' } } });
    expect(allText(called)).toContain('kept');
  });

  it('doctor and status name file:line:col and what serve runs on', async () => {
    await writeFile(file(), GOOD);
    expect((await runCli(dirs, ['list'])).code).toBe(0);
    await writeFile(file(), BROKEN);
    const doctor = await runCli(dirs, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`${file()}:4:`);
    expect(doctor.stdout).toContain('loadout serves its last good parse');
    const status = await runCli(dirs, ['status']);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`${file()}:4:`);
    expect(status.stdout).toContain('loadout serves its last good parse');
    expect(status.stdout).toMatch(/^│? *echo /m);
    const json = JSON.parse((await runCli(dirs, ['status', '--json'])).stdout) as { serversFile: unknown };
    expect(json.serversFile).toEqual({ problem: expect.stringContaining(`${file()}:4:`) as string, servingLastGood: true });
    const list = await runCli(dirs, ['list']);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(`${file()}:4:`);
  });
});
