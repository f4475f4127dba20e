// Stdio servers in the real sandbox (bubblewrap, socat, ripgrep; .ci/run installs them): the
// probe fixture tries what a malicious server would, through call-tool, with and without `sandbox:`.
// HOME, the config dir and the data dir are temp dirs; the only network is loopback.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  descendantsOf,
  eventually,
  fixture,
  type GatewayProcess,
  nodeServer,
  textOf,
  useGatewaySandbox,
  writeServersYaml,
} from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { callThrough } from '../helpers/lifecycle.js';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY----- test';
const TOKEN = 'ghp_sandboxtest0123456789';
const probe = (extra: Record<string, unknown> = {}) => nodeServer(fixture('sandboxProbe'), extra);
const boxed = {
  filesystem: { deny_read: ['~/taxes'], write: ['~/notes'] },
  network: { allow: [] },
};

let tcp: net.Server;
let tcpPort = 0;
let web: http.Server;
let webPort = 0;

beforeAll(async () => {
  tcp = net.createServer((socket) => socket.end('hello from loopback\n'));
  web = http.createServer((_request, response) => response.end('reached'));
  tcpPort = await listening(tcp);
  webPort = await listening(web);
});
afterAll(() => {
  tcp.close();
  web.close();
});

// The processes under `pid` that run the probe (bubblewrap, its shell, the server), leaving out the runtime's own.
async function serversUnder(pid: number): Promise<number[]> {
  const commandLines = await Promise.all(
    (await descendantsOf(pid)).map(async (child) => [child, await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')] as const),
  );
  return commandLines.filter(([, line]) => line.includes('sandboxProbe')).map(([child]) => child);
}

function listening(server: net.Server | http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

describe('sandbox: on a stdio server', () => {
  const sandbox = useGatewaySandbox();

  // A fake home with a key, a denied folder and a notes folder; loadout's secrets.env holds a token.
  async function home() {
    const dir = path.join(sandbox.dirs.root, 'home');
    await mkdir(path.join(dir, '.ssh'), { recursive: true });
    await mkdir(path.join(dir, 'taxes'), { recursive: true });
    await mkdir(path.join(dir, 'notes'), { recursive: true });
    await writeFile(path.join(dir, '.ssh', 'id_ed25519'), KEY);
    await writeFile(path.join(dir, 'taxes', '2025.txt'), 'income');
    await writeFile(path.join(sandbox.dirs.configDir, 'secrets.env'), `GITHUB_TOKEN=${TOKEN}\n`);
    return dir;
  }

  function attempts(gateway: GatewayProcess, server: string, dir: string) {
    const call = (tool: string, args: Record<string, unknown>) => callThrough(gateway, `${server}.${tool}`, args);
    return {
      key: () => call('read', { path: path.join(dir, '.ssh', 'id_ed25519') }),
      denied: () => call('read', { path: path.join(dir, 'taxes', '2025.txt') }),
      secrets: () => call('read', { path: path.join(sandbox.dirs.configDir, 'secrets.env') }),
      outside: () => call('write', { path: path.join(dir, 'outside.txt'), text: 'x' }),
      notes: () => call('write', { path: path.join(dir, 'notes', 'n.txt'), text: 'note' }),
      connect: () => call('connect', { host: '127.0.0.1', port: tcpPort }),
    };
  }

  it('refuses each attempt inside the sandbox, while the same server without one does each', async () => {
    const dir = await home();
    await writeServersYaml(sandbox.dirs.configDir, { open: probe(), boxed: probe({ sandbox: boxed }) });
    const gateway = await sandbox.start({ env: { HOME: dir } });
    const open = attempts(gateway, 'open', dir);
    const inside = attempts(gateway, 'boxed', dir);

    expect(textOf(await open.key())).toBe(KEY);
    expect(textOf(await open.denied())).toBe('income');
    expect(textOf(await open.secrets())).toContain(TOKEN);
    expect(textOf(await open.outside())).toBe('written');
    expect(textOf(await open.connect())).toBe('hello from loopback');

    for (const attempt of [inside.key, inside.denied, inside.secrets, inside.outside, inside.connect]) {
      const result = await attempt();
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).not.toContain(KEY);
      expect(textOf(result)).not.toContain(TOKEN);
    }
    await writeFile(path.join(dir, 'outside.txt'), 'before');
    expect((await inside.outside()).isError).toBe(true);
    expect(await readFile(path.join(dir, 'outside.txt'), 'utf8')).toBe('before');
    // Where `write` allows, it writes.
    expect(textOf(await inside.notes())).toBe('written');
    expect(await readFile(path.join(dir, 'notes', 'n.txt'), 'utf8')).toBe('note');
  });

  it('keeps the network open under sandbox: true, and reaches an allowed host only through the proxy', async () => {
    const dir = await home();
    await writeServersYaml(sandbox.dirs.configDir, {
      defaults: probe({ sandbox: true }),
      allowed: probe({ sandbox: { network: { allow: [`127.0.0.1:${webPort}`] } } }),
    });
    const gateway = await sandbox.start({ env: { HOME: dir } });

    expect(textOf(await callThrough(gateway, 'defaults.connect', { host: '127.0.0.1', port: tcpPort }))).toBe('hello from loopback');
    expect((await callThrough(gateway, 'defaults.read', { path: path.join(dir, '.ssh', 'id_ed25519') })).isError).toBe(true);
    expect((await callThrough(gateway, 'allowed.connect', { host: '127.0.0.1', port: tcpPort })).isError).toBe(true);
    expect(textOf(await callThrough(gateway, 'allowed.fetch', { url: `http://127.0.0.1:${webPort}/` }))).toBe('200 reached');
    const refused = await callThrough(gateway, 'allowed.fetch', { url: `http://127.0.0.1:${tcpPort}/` });
    expect(textOf(refused)).toMatch(/^403/);
    // The proxy's refusal is named below the stderr tail of the server's crash.
    expect(textOf(await callThrough(gateway, 'allowed.crash', {}))).toContain(`sandbox: refused network-outbound 127.0.0.1:${tcpPort}`);
  });

  it('gives every stdio server the defaults under gateway.sandbox: true, except one that says sandbox: false', async () => {
    const dir = await home();
    await writeServersYaml(sandbox.dirs.configDir, { boxed: probe(), exempt: probe({ sandbox: false }) }, { gateway: { sandbox: true } });
    const gateway = await sandbox.start({ env: { HOME: dir } });
    const key = { path: path.join(dir, '.ssh', 'id_ed25519') };

    expect((await callThrough(gateway, 'boxed.read', key)).isError).toBe(true);
    expect(textOf(await callThrough(gateway, 'exempt.read', key))).toBe(KEY);
  });

  it('refuses a sandboxed server in one line naming what to install where the sandbox cannot run, and starts nothing', async () => {
    const dir = await home();
    await writeServersYaml(sandbox.dirs.configDir, { boxed: probe({ sandbox: true }) });
    // No bubblewrap, socat or ripgrep on this PATH (the probe is started by node's full path).
    const bare = path.join(sandbox.dirs.root, 'bare-path');
    await mkdir(bare);
    const gateway = await sandbox.start({ env: { HOME: dir, PATH: bare } });

    const result = await callThrough(gateway, 'boxed.read', { path: path.join(dir, '.ssh', 'id_ed25519') });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Server 'boxed' was not started: it is sandboxed, and the sandbox cannot run here");
    expect(textOf(result)).toContain('install bubblewrap, socat and ripgrep');
    expect(await descendantsOf(gateway.pid)).toEqual([]);
  });

  it('still expands ${VAR} into each server only, restarts after a crash, and names its refusals in the stderr tail', async () => {
    const dir = await home();
    await writeFile(path.join(sandbox.dirs.configDir, 'secrets.env'), `GITHUB_TOKEN=${TOKEN}\nOTHER_TOKEN=other-secret-value\n`);
    await writeServersYaml(sandbox.dirs.configDir, {
      boxed: probe({ sandbox: true, env: { GH: '${GITHUB_TOKEN}' } }),
    });
    const gateway = await sandbox.start({ env: { HOME: dir } });
    const scratch = path.join(dir, 'scratch.txt');
    // Its own secret reached it; it cannot read the file they came from.
    const environ = textOf(await callThrough(gateway, 'boxed.read', { path: '/proc/self/environ' }));
    expect(environ).toContain(`GH=${TOKEN}`);
    expect(environ).not.toContain('other-secret-value');

    // Refused, and said so on its stderr in its own words; the crash's error names them as the sandbox's.
    expect((await callThrough(gateway, 'boxed.read', { path: path.join(dir, '.ssh', 'id_ed25519') })).isError).toBe(true);
    expect((await callThrough(gateway, 'boxed.write', { path: scratch, text: 'x' })).isError).toBe(true);
    const crashed = await callThrough(gateway, 'boxed.crash', {});
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toContain('probe: crashing on purpose');
    expect(textOf(crashed)).toContain('sandbox: refused reading ~/.ssh/id_ed25519 (ENOENT): ~/.ssh is hidden from this server');
    expect(textOf(crashed)).toMatch(
      /sandbox: refused writing ~\/scratch\.txt \((EROFS|EACCES|EPERM)\): add its folder to sandbox\.filesystem\.write/,
    );
    // The next call starts it again, in its sandbox.
    expect((await callThrough(gateway, 'boxed.write', { path: scratch, text: 'x' })).isError).toBe(true);
    const again = await callThrough(gateway, 'boxed.read', { path: path.join(dir, '.ssh', 'id_ed25519') });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/ENOENT|EACCES/);
    expect(existsSync(scratch)).toBe(false);
  });

  it('speaks both eras inside the sandbox: a 2026-07-28-only server and a 2025-only one', async () => {
    const dir = await home();
    const eraServer = (era: string) => nodeServer(fixture('eraServer'), { args: [fixture('eraServer'), '--era', era], sandbox: true });
    await writeServersYaml(sandbox.dirs.configDir, { modern: eraServer('modern'), legacy: eraServer('legacy') });
    const gateway = await sandbox.start({ env: { HOME: dir } });

    expect(textOf(await callThrough(gateway, 'modern.echo', { text: 'in 2026-07-28' }))).toBe('in 2026-07-28');
    expect(textOf(await callThrough(gateway, 'legacy.echo', { text: 'in 2025' }))).toBe('in 2025');
  });

  it('stops a sandboxed server when idle, removing its temp dir, and starts it again in its sandbox on the next call', async () => {
    const dir = await home();
    await writeServersYaml(sandbox.dirs.configDir, { boxed: probe({ sandbox: true, idle_timeout_minutes: 0.01 }) });
    const gateway = await sandbox.start({ env: { HOME: dir } });
    const environ = textOf(await callThrough(gateway, 'boxed.read', { path: '/proc/self/environ' }));
    const tempDir = /(?:^|\0)TMPDIR=([^\0]+)/.exec(environ)![1]!;
    expect(textOf(await callThrough(gateway, 'boxed.write', { path: path.join(tempDir, 'own.txt'), text: 'x' }))).toBe('written');
    expect(existsSync(path.join(tempDir, 'own.txt'))).toBe(true);

    await eventually(() => !existsSync(tempDir), 10_000, 'the idle server gone with its temp dir');
    // What stays is the sandbox runtime's own (its proxy's bridge), until loadout stops.
    await eventually(async () => (await serversUnder(gateway.pid)).length === 0, 10_000, 'no process of the server left');
    expect((await callThrough(gateway, 'boxed.read', { path: path.join(dir, '.ssh', 'id_ed25519') })).isError).toBe(true);
  });

  it("shows each server's sandbox in status, status --json and doctor, and doctor checks the sandbox works", async () => {
    await home();
    await writeServersYaml(sandbox.dirs.configDir, {
      boxed: probe({ sandbox: { network: { allow: ['api.acme.com'] } } }),
      open: probe(),
      remote: { url: 'http://127.0.0.1:9/mcp', enabled: false },
    });

    const status = await runCli(sandbox.dirs, ['status']);
    expect(status.stdout).toMatch(/^boxed\s+stdio\s+lazy\s+5 min\s+yes, network: api\.acme\.com\s/m);
    expect(status.stdout).toMatch(/^open\s+stdio\s+lazy\s+5 min\s+no\s/m);
    const json = JSON.parse((await runCli(sandbox.dirs, ['status', '--json'])).stdout) as {
      servers: Array<{ name: string; sandbox: unknown }>;
    };
    expect(Object.fromEntries(json.servers.map((server) => [server.name, server.sandbox]))).toEqual({
      boxed: { filesystem: { deny_read: [], write: [] }, network: { allow: ['api.acme.com'] } },
      open: false,
      remote: null,
    });

    const doctor = await runCli(sandbox.dirs, ['doctor', '--json']);
    const findings = (
      JSON.parse(doctor.stdout) as { findings: Array<{ check: string; server?: string; ok: boolean; message: string; fix?: string }> }
    ).findings;
    expect(findings.find((finding) => finding.check === 'sandbox')).toMatchObject({ ok: true, message: 'works; boxed run in it' });
    expect(findings.find((finding) => finding.server === 'boxed')?.message).toMatch(
      /^starts in its sandbox \(yes, network: api\.acme\.com\), 5 tools/,
    );
    expect(findings.find((finding) => finding.server === 'open')?.message).toMatch(/^starts, 5 tools/);

    const bare = path.join(sandbox.dirs.root, 'bare-path');
    await mkdir(bare);
    const refused = await runCli(sandbox.dirs, ['doctor'], { env: { PATH: bare } });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^problem sandbox: the sandbox cannot run here \(.*bwrap.*\): install bubblewrap, socat and ripgrep/m);
    expect(refused.stdout).toMatch(
      /^problem server boxed: does not start: it is sandboxed, and the sandbox cannot run here .* — fix: install bubblewrap, socat and ripgrep/m,
    );
  }, 60_000);
});
