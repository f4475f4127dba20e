// The package as a user gets it: `npm pack` holds only what runs, and the tarball installed into an
// empty prefix with production dependencies only gives a `loadout` that starts, serves MCP over
// stdio, and runs init and status. Uses the npm cache (and registry) the machine has.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_TOOL_NAMES, ROOT, makeTempDirs, type TempDirs } from '../helpers/gateway.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the packed tarball', () => {
  let dirs: TempDirs;
  let packed: { filename: string; files: Array<{ path: string }> };
  let bin: string;
  let home: string;
  const loadout = (args: string[]) => run(bin, ['--config', dirs.configDir, '--data', dirs.dataDir, ...args], { env: { ...process.env, HOME: home, NO_COLOR: '1' } });

  beforeAll(async () => {
    dirs = await makeTempDirs();
    home = path.join(dirs.root, 'home');
    await mkdir(home);
    // dist/ is built by `npm test`; --ignore-scripts skips `prepare` building it again.
    const pack = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dirs.root], { cwd: ROOT });
    packed = (JSON.parse(pack.stdout) as Array<typeof packed>)[0]!;
    const prefix = path.join(dirs.root, 'prefix');
    await run(npm, ['install', '--global', '--prefix', prefix, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', path.join(dirs.root, packed.filename)], { cwd: dirs.root });
    bin = path.join(prefix, process.platform === 'win32' ? 'loadout.cmd' : path.join('bin', 'loadout'));
  }, 120_000);
  afterAll(async () => {
    await dirs?.cleanup();
  });

  it('holds only the bundle, README, LICENSE, package.json and the example toolsets', () => {
    const files = packed.files.map((file) => file.path);
    expect(files).toContain('dist/bundle/loadout.js');
    expect(files).toContain('LICENSE');
    expect(files.filter((file) => !/^(dist\/bundle\/[^/]+\.(js|cjs)|toolsets\/[^/]+\.yaml|README\.md|LICENSE|package\.json)$/.test(file))).toEqual([]);
  });

  it('installs without devDependencies, and the installed loadout answers --version', async () => {
    const installed = path.join(path.dirname(path.dirname(bin)), 'lib', 'node_modules', 'loadout');
    const modules = await readdir(path.join(process.platform === 'win32' ? path.join(path.dirname(bin), 'node_modules', 'loadout') : installed, 'node_modules'));
    for (const dev of ['esbuild', 'typescript', 'vitest', '@types']) expect(modules).not.toContain(dev);
    const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect((await loadout(['--version'])).stdout.trim()).toBe(version);
  });

  it('runs init --no-discover and status', async () => {
    // execFile rejects on a non-zero exit.
    await loadout(['init', '--no-discover']);
    expect(await readFile(path.join(dirs.configDir, 'servers.yaml'), 'utf8')).toContain('servers: {}');
    expect((await loadout(['status'])).stdout).toContain(path.join(dirs.configDir, 'servers.yaml'));
  });

  it('completes an MCP handshake over stdio and lists the meta-tools', async () => {
    const client = new Client({ name: 'package-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: bin, args: ['--config', dirs.configDir, '--data', dirs.dataDir, 'serve'], env: { ...(process.env as Record<string, string>), HOME: home }, stderr: 'ignore' }));
    try {
      expect(client.getServerVersion()?.name).toBe('loadout');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(META_TOOL_NAMES);
    } finally {
      await client.close();
    }
  });
});
