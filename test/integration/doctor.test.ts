// `loadout doctor` against real fixture servers: one that works, one that exits at start, one
// with an unset ${VAR}, an HTTP endpoint that demands authorization, and a server listed both in
// Claude Code's ~/.claude.json and in loadout.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linesOf, runCli } from '../helpers/cli.js';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

type Finding = { subject: string; check: string; server?: string; ok: boolean; message: string; tools?: number; ms?: number; fix?: string };
type Report = { ok: boolean; findings: Finding[] };

describe('loadout doctor', () => {
  let dirs: TempDirs;
  let home: string;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    home = path.join(dirs.root, 'home');
    await mkdir(home);
  });
  afterEach(async () => {
    await dirs.cleanup();
  });

  it('exits 0 and says all is well when every server starts', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')), off: { command: 'not-installed', enabled: false } });
    const run = await runCli(dirs, ['doctor']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ok +server echo: starts, 5 tools listed \(\d+ ms\)$/m);
    expect(run.stdout).toMatch(/^ok +server off: disabled/m);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('All is well.');
  });

  it('reports each problem on one line with its fix, and exits 1', async () => {
    const unauthorized: Server = createServer((_request, response) => {
      response.writeHead(401, { 'WWW-Authenticate': 'Bearer realm="mcp"', 'Content-Type': 'application/json' });
      response.end('{"error":"invalid_token"}');
    });
    await new Promise<void>((resolve) => unauthorized.listen(0, '127.0.0.1', resolve));
    try {
      const echo = nodeServer(fixture('echo'));
      await writeServersYaml(dirs.configDir, {
        echo,
        crash: nodeServer(fixture('crash'), { env: { CRASH_UNLESS_FILE: path.join(dirs.root, 'absent') } }),
        secret: {
          command: 'npx',
          args: ['-y', 'some-server'],
          env: { API_KEY: '${DOCTOR_TEST_UNSET_KEY}', REGION: '${DOCTOR_TEST_REGION:-eu}' },
        },
        remote: { type: 'http', url: `http://127.0.0.1:${(unauthorized.address() as AddressInfo).port}/mcp` },
        keyed: {
          type: 'http',
          url: `http://127.0.0.1:${(unauthorized.address() as AddressInfo).port}/mcp`,
          headers: { Authorization: 'Bearer stale' },
        },
      });
      // Both clients start loadout too, so the agent really sees echo's tools twice.
      const loadout = { command: 'loadout', args: ['serve'] };
      await writeFile(path.join(home, '.claude.json'), JSON.stringify({ numStartups: 3, mcpServers: { echo, loadout } }, null, 2));
      await mkdir(path.join(home, '.cursor'));
      await writeFile(path.join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: { 'echo-server': echo, loadout } }));
      const run = await runCli(dirs, ['doctor']);
      expect(run.code).toBe(1);
      const line = (subject: string, what: RegExp) =>
        run.stdout.split('\n').find((text) => text.includes(` ${subject}: `) && what.test(text));
      expect(line('server echo', /starts, 5 tools/)).toMatch(/^ok/);
      expect(line('server crash', /does not start/)).toMatch(/^problem .* — fix: check its command: /);
      expect(line('server secret', /DOCTOR_TEST_UNSET_KEY/)).toBe(
        `problem server secret: uses \${DOCTOR_TEST_UNSET_KEY}, not set — fix: set DOCTOR_TEST_UNSET_KEY in ${path.join(dirs.configDir, 'secrets.env')} (NAME=value lines) or the environment loadout starts in (your shell, or the client's "env" for loadout), or write \${DOCTOR_TEST_UNSET_KEY:-default}`,
      );
      expect(line('server remote', /needs authorization/)).toMatch(/wants an OAuth login — fix: loadout auth remote$/);
      expect(line('server keyed', /needs authorization/)).toMatch(/— fix: add the credentials under headers:/);
      expect(line('server echo', /listed both in Claude/)).toBe(
        'problem server echo: listed both in Claude Code user scope (~/.claude.json) and in loadout: the agent sees its tools twice — fix: loadout setup claude-code --move',
      );
      expect(line('server echo', /listed both in Cursor/)).toBe(
        "problem server echo: listed both in Cursor global (~/.cursor/mcp.json) (as 'echo-server') and in loadout: the agent sees its tools twice — fix: loadout setup cursor --move",
      );

      const json = JSON.parse((await runCli(dirs, ['doctor', '--json'])).stdout) as Report;
      expect(json.ok).toBe(false);
      expect(
        json.findings
          .filter((finding) => !finding.ok)
          .map((finding) => finding.subject)
          .sort(),
      ).toEqual(['server crash', 'server echo', 'server echo', 'server keyed', 'server remote', 'server secret']);
      expect(json.findings.every((finding) => finding.ok || finding.fix)).toBe(true);
      expect(json.findings.filter((finding) => finding.check === 'duplicate').map((finding) => finding.server)).toEqual(['echo', 'echo']);
      expect(json.findings.find((finding) => finding.server === 'secret')).toMatchObject({ check: 'env', ok: false });
    } finally {
      unauthorized.close();
    }
  });

  it('records a failed start, so status afterwards gives the reason, worded for no running gateway, and exits 1', async () => {
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      crash: nodeServer(fixture('crash'), { env: { CRASH_UNLESS_FILE: path.join(dirs.root, 'absent') } }),
    });
    expect((await runCli(dirs, ['status'])).code).toBe(0);
    expect((await runCli(dirs, ['doctor'])).code).toBe(1);
    const status = await runCli(dirs, ['status']);
    expect(status.code).toBe(1);
    expect((await runCli(dirs, ['status', '--json'])).code).toBe(1);
    expect(status.stdout).toMatch(/^crash +stdio .*failed/m);
    expect(status.stdout).toMatch(
      /^crash: discovery failed at \d\d:\d\d:\d\d \(1 attempt in a row\); "loadout refresh crash" tries again\.$/m,
    );
    expect(status.stdout).toContain('exited with code');
    expect(status.stdout).not.toContain('by "loadout serve"');
    expect(status.stdout).toContain('No gateway running');
  });

  it('exits 1 when the last start of a server listed before failed, with the reason, its cached tools still counted', async () => {
    const present = path.join(dirs.root, 'present');
    await writeFile(present, '');
    await writeServersYaml(dirs.configDir, { crash: nodeServer(fixture('crash'), { env: { CRASH_UNLESS_FILE: present } }) });
    expect((await runCli(dirs, ['refresh'])).code).toBe(0);
    const before = await runCli(dirs, ['status']);
    expect(before.code).toBe(0);
    await rm(present);
    expect((await runCli(dirs, ['doctor'])).code).toBe(1);

    const status = await runCli(dirs, ['status']);
    expect(status.code).toBe(1);
    // The table is what it was: the tools listed before are still the catalog's.
    expect(linesOf(status.stdout)[1]).toBe(linesOf(before.stdout)[1]);
    expect(status.stdout).toMatch(
      /^crash: last start failed at \d\d:\d\d:\d\d \(1 attempt in a row\); its tools are the ones listed before; "loadout refresh crash" tries again\.$/m,
    );
    expect(status.stdout).toContain('exited with code');
    const json = await runCli(dirs, ['status', '--json']);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as { servers: Array<{ discovered: boolean; discovery: unknown }> }).servers[0]).toMatchObject({
      discovered: true,
      discovery: { state: 'failed', failures: 1, code: 'SERVER_START_FAILED' },
    });

    await writeFile(present, '');
    expect((await runCli(dirs, ['refresh'])).code).toBe(0);
    expect((await runCli(dirs, ['status'])).code).toBe(0);
  });

  it('reports an unset ${VAR} in an OAuth client_secret as the variable to set', async () => {
    await writeServersYaml(dirs.configDir, {
      vault: {
        type: 'http',
        url: 'http://127.0.0.1:9/mcp',
        oauth: { client_id: 'loadout', client_secret: '${DOCTOR_TEST_UNSET_SECRET}' },
      },
    });
    const report = JSON.parse((await runCli(dirs, ['doctor', '--json'])).stdout) as Report;
    expect(report.findings.find((finding) => finding.server === 'vault')).toMatchObject({
      check: 'env',
      ok: false,
      message: 'uses ${DOCTOR_TEST_UNSET_SECRET}, not set',
    });
  });

  it('says why a server does not start without naming it twice', async () => {
    await writeServersYaml(dirs.configDir, { odd: { type: 'http', url: 'not a url' } });
    const run = await runCli(dirs, ['doctor']);
    expect(run.stdout).toMatch(/^problem server odd: does not start: its address is unusable: Invalid URL — fix: check its url not a url/m);
  });

  it('gives a missing program one fix, and the entry to write right under its own fix line', async () => {
    await writeServersYaml(dirs.configDir, {
      ghost: { command: 'loadout-test-no-such-program' },
      joined: { command: 'loadout-test-no-such-npx -y some-server', args: ['--stdio'] },
    });
    const run = await runCli(dirs, ['doctor']);
    expect(linesOf(run.stdout).filter((line) => line.includes('server ghost'))).toEqual([
      'problem server ghost: does not start: no program named "loadout-test-no-such-program" on PATH — fix: install it, or give its full path as `command`',
    ]);
    // A whole command line is refused as the entry is read, before anything starts.
    expect(linesOf(run.stdout).filter((line) => line.includes('server joined'))).toEqual([
      expect.stringMatching(
        /^problem server joined: left out, its entry is invalid: .*servers\.yaml:\d+:\d+: "loadout-test-no-such-npx -y some-server" is a whole command line; `command` is the program alone and `args` its arguments: write command: "loadout-test-no-such-npx" and args: \["-y","some-server","--stdio"\] at servers\.joined\.command — fix: correct that entry in servers\.yaml$/,
      ),
    ]);
  });

  it('flags no duplicate when the client does not start loadout (after setup --undo), and its findings carry fields', async () => {
    const echo = nodeServer(fixture('echo'));
    await writeServersYaml(dirs.configDir, { echo });
    // Claude Code lists echo itself and no loadout: it never sees echo twice.
    await writeFile(path.join(home, '.claude.json'), JSON.stringify({ numStartups: 3, mcpServers: { echo } }, null, 2));
    const run = await runCli(dirs, ['doctor']);
    expect(run.stdout).not.toContain('listed both');
    expect(run.code).toBe(0);

    const report = JSON.parse((await runCli(dirs, ['doctor', '--json'])).stdout) as Report;
    expect(report.ok).toBe(true);
    const start = report.findings.find((finding) => finding.server === 'echo');
    expect(start).toMatchObject({ server: 'echo', check: 'start', ok: true, tools: 5 });
    expect(start?.ms).toEqual(expect.any(Number));
    expect(report.findings.find((finding) => finding.check === 'servers.yaml')?.ok).toBe(true);
  });

  it('says how to start when there is no servers.yaml, and names the line of a broken one', async () => {
    const missing = await runCli(dirs, ['doctor']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('problem servers.yaml: ');
    expect(missing.stdout).toContain('fix: run "loadout setup <client>" or "loadout init"');
    await writeFile(path.join(dirs.configDir, 'servers.yaml'), 'servers:\n  a: [unclosed\n');
    const broken = await runCli(dirs, ['doctor', '--json']);
    expect(broken.code).toBe(1);
    const report = JSON.parse(broken.stdout) as Report;
    expect(report.findings.find((finding) => finding.subject === 'servers.yaml')?.message).toMatch(/servers\.yaml:\d+:\d+: /);
  });
});
