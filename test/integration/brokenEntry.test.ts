// One invalid entry in servers.yaml (a typo in one server) leaves that server out and runs the
// others: the gateway starts with the valid servers, and doctor, status, the server map and a
// call's error all name the broken entry with its file:line:col.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linesOf, runCli } from '../helpers/cli.js';
import { eventually, fixture, makeTempDirs, startGateway, textOf, type TempDirs } from '../helpers/gateway.js';

// Line 3, column 5: `comand` is the typo (for `command`). It comes first: tools merged into echo's
// entry below it leave its place as it is.
const TYPO_ENTRY = `  typo:
    comand: node
`;
const SERVERS_YAML = `servers:
${TYPO_ENTRY}  echo:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(fixture('echo'))}]
`;

describe('one broken servers.yaml entry', () => {
  let dirs: TempDirs;
  let where: string;
  const file = () => path.join(dirs.configDir, 'servers.yaml');
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeFile(file(), SERVERS_YAML);
    where = `${file()}:3:5`;
  });
  afterAll(async () => {
    await dirs.cleanup();
  });

  it('the gateway starts with the valid servers; the map and a call name the broken entry', async () => {
    const gateway = await startGateway({ dirs });
    try {
      const echoed = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'hi' } } });
      expect(echoed.isError).toBeFalsy();
      expect(textOf(echoed)).toContain('hi');
      // The map in the session's instructions names it with the file's place, not the whole path.
      expect(gateway.client.getInstructions()).toMatch(/^typo: left out, its entry is invalid: servers\.yaml:3:5: unknown key 'comand'/m);
      const call = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'typo.anything', arguments: {} } });
      expect(call.isError).toBe(true);
      expect(textOf(call)).toContain(where);
      expect(textOf(call)).toContain("unknown key 'comand'");
      // The valid server's tools are recorded in servers.yaml around the broken entry, left as written.
      await eventually(
        async () => /^ {4}tools:\n {6}echo:\n/m.test(await readFile(file(), 'utf8')),
        10_000,
        "echo's tools in servers.yaml",
      );
      expect(await readFile(file(), 'utf8')).toContain(TYPO_ENTRY);
      // Reported once, at start; a discovery has nothing to add.
      expect(gateway.stderr().split(`${where}: unknown key 'comand'`)).toHaveLength(2);
      expect(gateway.stderr()).not.toContain('could not record discovered tools');
    } finally {
      await gateway.close();
    }
  });

  it('refresh records the valid servers, then fails naming the broken entry once', async () => {
    const run = await runCli(dirs, ['refresh']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^│? *echo *│? *ok *│? *5 /m);
    expect(linesOf(run.stderr)).toEqual([`loadout: ${where}: unknown key 'comand' (did you mean 'command'?) at servers.typo`]);
    expect(await readFile(file(), 'utf8')).toContain(TYPO_ENTRY);
    const named = await runCli(dirs, ['refresh', 'typo']);
    expect(named.code).toBe(1);
    expect(named.stderr).toContain(`Server 'typo' is left out: its entry in servers.yaml is invalid (${where}: unknown key 'comand'`);
  });

  it('doctor reports the entry with file:line:col and goes on to check the other servers', async () => {
    const run = await runCli(dirs, ['doctor']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`server typo: left out, its entry is invalid: ${where}: unknown key 'comand' (did you mean 'command'?)`);
    expect(run.stdout).toMatch(/^ok +server echo: starts, 5 tools listed/m);
  });

  it('status lists the valid servers, names the broken entry and exits 1', async () => {
    const run = await runCli(dirs, ['status']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^echo /m);
    expect(run.stdout).toContain(`typo: left out, its entry is invalid: ${where}`);
    const jsonRun = await runCli(dirs, ['status', '--json']);
    expect(jsonRun.code).toBe(1);
    const json = JSON.parse(jsonRun.stdout) as { brokenServers: { name: string; problem: string }[] };
    expect(json.brokenServers).toEqual([{ name: 'typo', problem: expect.stringContaining(where) as string }]);
  });
});
