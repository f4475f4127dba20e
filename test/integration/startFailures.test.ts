// A server that cannot start says why, in refresh, doctor, status and the agent's errors: a
// missing script shows its own error (Cannot find module …), a missing program is named in plain
// words, and a secret the server prints from its `${VAR}` env is masked everywhere, on disk too.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli.js';
import { fixture, makeTempDirs, nodeServer, startGateway, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

const SECRET = 'tok-5up3r-s3cret-4711';
const env = { LOADOUT_TEST_TOKEN: SECRET };

describe('start failures explain themselves', () => {
  let dirs: TempDirs;
  let refresh: CliRun;
  let doctor: CliRun;
  let status: CliRun;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      broken: nodeServer(path.join(dirs.root, 'no-such-server.js')),
      ghost: { command: 'loadout-test-no-such-program', args: ['--stdio'] },
      leaky: {
        command: process.execPath,
        args: ['-e', 'console.error("starting with token=" + process.env.API_TOKEN); process.exit(3)'],
        env: { API_TOKEN: '${LOADOUT_TEST_TOKEN}' },
      },
    });
    refresh = await runCli(dirs, ['refresh'], { env });
    [doctor, status] = await Promise.all([runCli(dirs, ['doctor'], { env }), runCli(dirs, ['status'], { env })]);
  });
  afterAll(async () => {
    await dirs.cleanup();
  });

  it('a missing script shows its own error in refresh, doctor and status', () => {
    expect(refresh.code).toBe(1);
    for (const output of [refresh.stderr, doctor.stdout, status.stdout]) {
      expect(output).toMatch(/broken/);
      expect(output).toContain('Cannot find module');
    }
    expect(refresh.stderr).toContain("Server 'broken' failed to start: its process exited with code 1 before answering");
    expect(doctor.stdout).not.toContain('Connection closed');
  });

  it('a missing program is named in plain words, not as a spawn ENOENT', () => {
    for (const output of [refresh.stderr, doctor.stdout, status.stdout])
      expect(output).toContain('no program named "loadout-test-no-such-program" on PATH');
    expect(refresh.stderr + doctor.stdout + status.stdout).not.toContain('ENOENT');
  });

  it('a secret the server prints from its ${VAR} env is masked in every output and every file', async () => {
    for (const output of [refresh.stderr, doctor.stdout, status.stdout]) {
      expect(output).toContain('starting with token=[LOADOUT_TEST_TOKEN hidden]');
      expect(output).not.toContain(SECRET);
    }
    expect(refresh.stderr).toContain("Server 'leaky' failed to start: its process exited with code 3 before answering");
    for (const file of await filesUnder(dirs.root)) expect(await readFile(file, 'utf8'), file).not.toContain(SECRET);
  });

  it("the agent's discover-all-tools and call-tool errors carry the server's own error", async () => {
    const gateway = await startGateway({ dirs, env });
    try {
      const discovered = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
      expect(discovered).toContain('Cannot find module');
      expect(discovered).toContain('no program named "loadout-test-no-such-program" on PATH');
      expect(discovered).toContain('token=[LOADOUT_TEST_TOKEN hidden]');
      const call = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'broken.anything', arguments: {} } });
      expect(call.isError).toBe(true);
      expect(textOf(call)).toContain('Cannot find module');
      expect(gateway.stderr()).not.toContain(SECRET);
    } finally {
      await gateway.close();
    }
  });
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}
