// The package as a user gets it: `npm pack` holds only what runs, and the tarball installed into an
// empty prefix with production dependencies only gives a `loadout` that starts, serves MCP over
// stdio, and runs init and status. Uses the npm cache (and registry) the machine has: `--offline`
// fails after a bare `npm ci`, which caches tarballs but not the registry metadata a tarball
// install resolves its dependency ranges with.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_TOOL_NAMES, ROOT, fixture, makeTempDirs, type TempDirs } from '../helpers/gateway.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the packed tarball', () => {
  let dirs: TempDirs;
  let packed: { filename: string; files: Array<{ path: string }> };
  let bin: string;
  let home: string;
  let installStderr: string;
  let manifestBefore: string;
  const loadout = (args: string[]) =>
    run(bin, ['--config', dirs.configDir, '--data', dirs.dataDir, ...args], { env: { ...process.env, HOME: home, NO_COLOR: '1' } });

  beforeAll(async () => {
    dirs = await makeTempDirs();
    home = path.join(dirs.root, 'home');
    await mkdir(home);
    manifestBefore = await readFile(path.join(ROOT, 'package.json'), 'utf8');
    // With its scripts, as `npm publish` packs: prepack takes `prepare` out of the packed manifest
    // (and builds only if dist/ is older than its sources; `npm test` has just built it).
    const pack = await run(npm, ['pack', '--json', '--pack-destination', dirs.root], { cwd: ROOT });
    packed = (JSON.parse(pack.stdout) as Array<typeof packed>)[0]!;
    const prefix = path.join(dirs.root, 'prefix');
    const install = await run(
      npm,
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--omit=dev',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        path.join(dirs.root, packed.filename),
      ],
      { cwd: dirs.root },
    );
    installStderr = install.stderr;
    bin = path.join(prefix, process.platform === 'win32' ? 'loadout.cmd' : path.join('bin', 'loadout'));
  }, 120_000);
  afterAll(async () => {
    await dirs?.cleanup();
  });

  it('holds only the bundle, the search word vectors, the store migrations, README, LICENSE, package.json and the example toolsets', () => {
    const files = packed.files.map((file) => file.path);
    expect(files).toContain('dist/bundle/loadout.js');
    expect(files).toContain('LICENSE');
    expect(files).toContain('assets/migrations/0001_initial.sql');
    expect(
      files.filter(
        (file) =>
          !/^(dist\/bundle\/[^/]+\.(js|cjs)|toolsets\/[^/]+\.yaml|assets\/(word-vectors\.bin|WORD-VECTORS-LICENSE\.md|migrations\/\d{4}_[\w-]+\.sql)|README\.md|LICENSE|package\.json)$/.test(
            file,
          ),
      ),
    ).toEqual([]);
  });

  it('installs with no npm warning (no install script to approve), and packing leaves package.json as it was', async () => {
    expect(installStderr).not.toMatch(/npm warn/i);
    const manifest = JSON.parse(
      await readFile(path.join(path.dirname(path.dirname(bin)), 'lib', 'node_modules', 'loadout', 'package.json'), 'utf8'),
    ) as {
      scripts?: Record<string, string>;
    };
    expect(Object.keys(manifest.scripts ?? {})).not.toContain('prepare');
    expect(await readFile(path.join(ROOT, 'package.json'), 'utf8')).toBe(manifestBefore);
  });

  it('installs without devDependencies, and the installed loadout answers --version', async () => {
    const installed = path.join(path.dirname(path.dirname(bin)), 'lib', 'node_modules', 'loadout');
    const modules = await readdir(
      path.join(process.platform === 'win32' ? path.join(path.dirname(bin), 'node_modules', 'loadout') : installed, 'node_modules'),
    );
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
    await client.connect(
      new StdioClientTransport({
        command: bin,
        args: ['--config', dirs.configDir, '--data', dirs.dataDir, 'serve'],
        env: { ...(process.env as Record<string, string>), HOME: home },
        stderr: 'ignore',
      }),
    );
    try {
      expect(client.getServerVersion()?.name).toBe('loadout');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(META_TOOL_NAMES);
    } finally {
      await client.close();
    }
  });
});

describe('a global install of the clone (npm install -g .)', () => {
  let dirs: TempDirs;
  afterAll(async () => {
    await dirs?.cleanup();
  });

  it('puts loadout on the PATH, and setup claude-code --move --yes leaves Claude Code with `loadout serve` alone', async () => {
    dirs = await makeTempDirs();
    const home = path.join(dirs.root, 'home');
    const project = path.join(dirs.root, 'project');
    await mkdir(project, { recursive: true });
    await mkdir(home);
    const template = await readFile(path.join(ROOT, 'test/fixtures/clients/claude.json'), 'utf8');
    await writeFile(
      path.join(home, '.claude.json'),
      template.replaceAll('__PROJECT__', project).replaceAll('__NODE__', process.execPath).replaceAll('__ECHO__', fixture('echo')),
    );
    const prefix = path.join(dirs.root, 'prefix');
    // dist/ is built already; --ignore-scripts skips `prepare` building it again (scripts/prepare.mjs).
    await run(npm, ['install', '--global', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', ROOT], { cwd: dirs.root });
    // Only the install's bin dir and node: no other `loadout` or `claude` on this PATH.
    const PATH = [path.join(prefix, 'bin'), path.dirname(process.execPath)].join(path.delimiter);
    const env = { ...process.env, HOME: home, PATH, NO_COLOR: '1' };
    await run('loadout', ['--config', dirs.configDir, '--data', dirs.dataDir, 'setup', 'claude-code', '--move', '--yes'], {
      cwd: project,
      env,
    });

    const claude = JSON.parse(await readFile(path.join(home, '.claude.json'), 'utf8')) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    expect(claude.mcpServers).toEqual({
      loadout: { command: 'loadout', args: ['--config', dirs.configDir, '--data', dirs.dataDir, 'serve'], alwaysLoad: true },
    });
    expect(await readFile(path.join(dirs.configDir, 'servers.yaml'), 'utf8')).toMatch(/^ {2}github:$/m);
    const client = new Client({ name: 'claude-code-stand-in', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ ...claude.mcpServers.loadout!, env: env, stderr: 'ignore' }));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(META_TOOL_NAMES);
    } finally {
      await client.close();
    }
  }, 60_000);
});
