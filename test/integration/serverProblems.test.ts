// A server no refresh can discover — its entry in servers.yaml is invalid, or it uses a ${VAR} that
// is not set — is told the same way by list, search, doctor, the agent's instructions and
// discover-all-tools: the entry or variable, and its fix, never "run loadout refresh" for it.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture, makeTempDirs, startGateway, textOf, type TempDirs } from '../helpers/gateway.js';

const UNSET = 'LOADOUT_TEST_PROBLEMS_TOKEN';

describe('servers no refresh can discover', () => {
  let dirs: TempDirs;
  let file: string;
  let invalid: string;
  let unset: string;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    file = path.join(dirs.configDir, 'servers.yaml');
    const echo = `command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(fixture('echo'))}]`;
    // Line 3, column 5: `comand` is the typo.
    await writeFile(
      file,
      `servers:\n  typo:\n    comand: node\n  echo:\n    ${echo}\n  github:\n    ${echo}\n    env:\n      TOKEN: \${${UNSET}}\n`,
    );
    invalid = `typo: left out, its entry is invalid: ${file}:3:5: unknown key 'comand' (did you mean 'command'?) at servers.typo; fix: correct that entry in servers.yaml`;
    unset = `github: uses \${${UNSET}}, not set; fix: set ${UNSET} in ${path.join(dirs.configDir, 'secrets.env')} (NAME=value lines) or the environment loadout starts in (your shell, or the client's "env" for loadout), or write \${${UNSET}:-default}`;
  });
  afterAll(async () => {
    await dirs.cleanup();
  });

  it('list and search name each with its fix, counting the invalid entry among the servers', async () => {
    const before = await runCli(dirs, ['list']);
    expect(before.stdout).toContain(
      `3 of 3 servers are not discovered yet (typo, github, echo); run "loadout refresh" for echo\n  ${invalid}\n  ${unset}\n`,
    );
    // It still fails for the invalid entry, after recording echo.
    expect((await runCli(dirs, ['refresh', 'echo'])).stdout).toMatch(/^│? *echo *│? *ok /m);
    for (const args of [['list'], ['search', 'echo', 'text']]) {
      const run = await runCli(dirs, args);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`2 of 3 servers are not discovered yet (typo, github)\n  ${invalid}\n  ${unset}\n`);
      expect(run.stdout).not.toContain('refresh');
    }
    const named = await runCli(dirs, ['list', '--server', 'typo']);
    expect(named.code).toBe(1);
    expect(named.stderr).toContain(`Server 'typo' is left out: its entry in servers.yaml is invalid (${file}:3:5: unknown key 'comand'`);
    expect(named.stderr).toContain('; correct that entry in servers.yaml');
  });

  it('doctor says the same problems and fixes', async () => {
    const run = await runCli(dirs, ['doctor']);
    expect(run.stdout).toContain(`problem server ${invalid.replace('; fix: ', ' — fix: ')}`);
    expect(run.stdout).toContain(`problem server ${unset.replace('; fix: ', ' — fix: ')}`);
  });

  it('the instructions and discover-all-tools name each with its fix, counting all three servers', async () => {
    const gateway = await startGateway({ dirs });
    try {
      const short = (text: string) => text.replace(file, 'servers.yaml');
      const instructions = gateway.client.getInstructions() ?? '';
      expect(instructions).toContain(`\n${unset}\n`);
      expect(instructions).toContain(`\n${short(invalid)}`);
      const answer = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo text' } }));
      expect(answer).toContain(
        `2 of 3 servers are not discovered (typo, github).\n${short(invalid)} (the user's to fix; no refresh will)\n${unset} (the user's to fix; no refresh will)\n`,
      );
      expect(answer).not.toContain('refresh"');
      expect(answer).not.toContain('! github');
    } finally {
      await gateway.close();
    }
  });
});
