// The CLI as a new user meets it: plain `loadout` and --help, --json everywhere, a query that is
// always a query, errors that name the CLI's own commands, and typos in our files named as typos.
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startOAuthFixture } from '../fixtures/oauthServer.js';
import { linesOf, runCli } from '../helpers/cli.js';
import { CLI, textOf, useGatewaySandbox, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { cachedTool, writeToolCache } from '../helpers/lifecycle.js';

// Never started: every test reads the cached catalog only.
const IDLE_SERVER = { command: process.execPath, args: ['-e', ''] };

describe('CLI usage', () => {
  const sandbox = useGatewaySandbox();
  let dirs: TempDirs;
  beforeEach(() => {
    dirs = sandbox.dirs;
  });

  const catalogWithEnrichTool = async (): Promise<void> => {
    await writeServersYaml(dirs.configDir, { crm: IDLE_SERVER });
    await writeToolCache(dirs.dataDir, {
      crm: [cachedTool('enrich_contact', 'Enrich a contact with company data.'), cachedTool('delete_contact', 'Delete a contact.')],
    });
  };

  describe('help', () => {
    it('plain `loadout` prints the help on stdout and exits 0', async () => {
      const run = await runCli(dirs, []);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: loadout /);
    });

    it('a command group alone (`loadout toolset`) prints its help on stdout and exits 0', async () => {
      const run = await runCli(dirs, ['toolset']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: loadout toolset /);
    });

    it('lists commands in the order of use, each with an example', async () => {
      const { stdout } = await runCli(dirs, ['--help']);
      const commands = stdout.slice(stdout.indexOf('Commands:'));
      const names = [...commands.matchAll(/^ {2}([a-z]+)\b/gm)].map((match) => match[1]);
      expect(names).toEqual([
        'setup',
        'doctor',
        'serve',
        'search',
        'status',
        'list',
        'refresh',
        'toolset',
        'auth',
        'audit',
        'enrich',
        'init',
        'optimize',
        'store',
        'help',
      ]);
      for (const name of names.filter((name) => name !== 'help'))
        expect(commands, name).toMatch(new RegExp(`^ +e\\.g\\. loadout ${name}\\b`, 'm'));
    });

    it('wraps at the terminal width (COLUMNS when not a terminal)', async () => {
      for (const args of [['--help'], ['serve', '--help'], ['search', '--help']]) {
        const run = await runCli(dirs, args, { env: { COLUMNS: '60' } });
        const long = run.stdout.split('\n').filter((line) => line.length > 60);
        expect(long, args.join(' ')).toEqual([]);
      }
    });

    it('prints defaults one way: "(default: X)" unquoted, with choices as "choices: a, b"', async () => {
      const helps = await Promise.all(
        [
          ['--help'],
          ['serve', '--help'],
          ['search', '--help'],
          ['refresh', '--help'],
          ['enrich', '--help'],
          ['optimize', 'run', '--help'],
        ].map((args) => runCli(dirs, args, { env: { COLUMNS: '200' } })),
      );
      const text = helps.map((help) => help.stdout).join('\n');
      expect(text).not.toMatch(/default: "/);
      expect(text).not.toMatch(/choices: "/);
      expect(text).toMatch(
        /--log-level <level> +stderr log level \(choices: fatal, error, warn, info, debug, trace, silent; default: warn\)/,
      );
      expect(text).toMatch(/--host <host> .*\(default: 127\.0\.0\.1\)/);
      expect(text).toMatch(/--config <dir> +config dir \(default: \$LOADOUT_CONFIG_DIR or ~\/\.config\/loadout\)/);
      expect(text).toMatch(/--limit <n> .*\(default: 10\)/);
    });

    it("shows examples on each command's own help", async () => {
      const run = await runCli(dirs, ['setup', '--help']);
      expect(run.stdout).toMatch(/^Examples:\n {2}loadout setup claude-code/m);
    });
  });

  describe('--json', () => {
    it('setup --dry-run --json prints the plan as JSON and changes nothing', async () => {
      const home = path.join(dirs.root, 'home');
      const project = path.join(dirs.root, 'project');
      await Promise.all([mkdir(home), mkdir(project)]);
      await writeFile(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { tools: IDLE_SERVER } }));
      await writeFile(path.join(home, '.claude.json'), JSON.stringify({ mcpServers: {} }));
      const run = await runCli(dirs, ['setup', 'claude-code', '--dry-run', '--json'], { cwd: project, env: { PATH: '/nonexistent' } });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const plan = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(plan).toMatchObject({ client: 'claude-code', applied: false, imported: ['tools'] });
      expect(plan.changes).toEqual(expect.arrayContaining([expect.objectContaining({ file: path.join(home, '.claude.json') })]));
    });

    it('setup --json refuses to ask a question it cannot show', async () => {
      const run = await runCli(dirs, ['setup', 'claude-code', '--json'], { env: { PATH: '/nonexistent' } });
      expect(run.code).toBe(1);
      expect(linesOf(run.stderr)).toEqual(['loadout: --json needs --yes or --dry-run: a script cannot answer "apply these changes?"']);
    });

    it('auth --json logs in with the URL on stderr and one JSON object on stdout', async () => {
      const oauth = await startOAuthFixture();
      try {
        await writeServersYaml(dirs.configDir, { linear: { type: 'http', url: oauth.mcpUrl } });
        const child = spawn(
          process.execPath,
          [CLI, '--config', dirs.configDir, '--data', dirs.dataDir, 'auth', 'linear', '--no-browser', '--json', '--timeout', '30'],
          { env: { ...process.env, HOME: path.join(dirs.root, 'home'), NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
        const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
        const url = await new Promise<string>((resolve, reject) => {
          child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString('utf8');
            const match = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stderr);
            if (match) resolve(match[1]!);
          });
          void exited.then((code) => reject(new Error(`auth exited ${code} before printing a URL: ${stdout}${stderr}`)));
        });
        // Play the browser: authorize, then follow the redirect to loadout's loopback listener.
        const authorize = await fetch(url, { redirect: 'manual' });
        expect((await fetch(authorize.headers.get('location')!)).status).toBe(200);
        expect(await exited).toBe(0);
        expect(JSON.parse(stdout)).toEqual({
          server: 'linear',
          authorized: true,
          tokensFile: path.join(dirs.dataDir, 'oauth', 'linear.json'),
        });
      } finally {
        await oauth.close();
      }
    });

    it('auth --logout --json says what it forgot', async () => {
      await writeServersYaml(dirs.configDir, { remote: { url: 'http://127.0.0.1:9/mcp' } });
      const run = await runCli(dirs, ['auth', 'remote', '--logout', '--json']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ server: 'remote', loggedOut: false });
    });
  });

  describe('search and enrich', () => {
    it('searches for the word "enrich" like any other word', async () => {
      await catalogWithEnrichTool();
      const run = await runCli(dirs, ['search', 'enrich', '--json']);
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout) as { query: string; tools: Array<{ tool: string }> };
      expect(result.query).toBe('enrich');
      expect(result.tools[0]?.tool).toBe('crm.enrich_contact');
    });

    it('takes the query after -- even when it reads like an option', async () => {
      await catalogWithEnrichTool();
      for (const query of ['--delete', 'enrich']) {
        const run = await runCli(dirs, ['search', '--json', '--', query]);
        expect(run.code, query).toBe(0);
        expect((JSON.parse(run.stdout) as { query: string }).query).toBe(query);
      }
    });

    it('enrich without a backend says how to configure one, with a snippet that pastes as it is', async () => {
      await catalogWithEnrichTool();
      const run = await runCli(dirs, ['enrich']);
      expect(run.code).toBe(1);
      const lines = run.stderr.trimEnd().split('\n');
      const snippet = lines.slice(lines.indexOf('optimization:')).join('\n');
      expect(parse(snippet)).toEqual({
        optimization: { backend: 'openai', base_url: 'http://127.0.0.1:11434/v1', model: expect.any(String) },
      });
      // Every backend it suggests is one `enrich --backend` takes.
      const choices = /--backend <kind>.*\(choices: ([^;)]+)/
        .exec((await runCli(dirs, ['enrich', '--help'], { env: { COLUMNS: '200' } })).stdout)![1]!
        .split(', ');
      for (const [, kind] of run.stderr.matchAll(/(?:backend: |--backend )(\w+)/g)) expect(choices).toContain(kind);
    });
  });

  describe('errors name the CLI', () => {
    it('toolset equip of a missing toolset names `loadout toolset create`, not the meta-tool', async () => {
      const run = await runCli(dirs, ['toolset', 'equip', 'nonexist']);
      expect(run.code).toBe(1);
      expect(linesOf(run.stderr)).toEqual([
        `loadout: Toolset 'nonexist' not found; no toolsets are saved yet; create one with "loadout toolset create NAME server.tool …"`,
      ]);
    });
  });

  it('the same missing toolset names build-toolset to the agent', async () => {
    await writeServersYaml(dirs.configDir, {});
    const gateway = await sandbox.start();
    const result = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'nonexist' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("Toolset 'nonexist' not found; no toolsets are saved yet; create one with build-toolset");
  });

  describe('typos in our files', () => {
    it.each([
      [
        'a server key',
        'servers:\n  echo:\n    comand: node\n',
        // refresh refreshes the other servers, then fails naming the broken entry (brokenEntry.test.ts).
        ['refresh'],
        `servers.yaml:3:5: unknown key 'comand' (did you mean 'command'?) at servers.echo`,
      ],
      [
        'a tool key',
        'servers:\n  echo:\n    command: node\n    tools:\n      add: { enabeld: false }\n',
        ['refresh'],
        `servers.yaml:5:14: unknown key 'enabeld' (did you mean 'enabled'?) at servers.echo.tools.add`,
      ],
      ['a gateway key', 'gateway:\n  idle_timeout: 3\n', ['list'], `servers.yaml:2:3: unknown key 'idle_timeout' at gateway`],
    ])('names %s as an unknown key, with a suggestion, file and line', async (_title, yaml, args, message) => {
      await writeFile(path.join(dirs.configDir, 'servers.yaml'), yaml);
      const run = await runCli(dirs, args);
      expect(run.code).toBe(1);
      expect(linesOf(run.stderr)).toEqual([`loadout: ${path.join(dirs.configDir, message)}`]);
    });

    it('names a typo in a toolset file the same way', async () => {
      await mkdir(path.join(dirs.configDir, 'toolsets'));
      await writeFile(path.join(dirs.configDir, 'toolsets', 'x.yaml'), 'name: x\ntool: [echo.add]\n');
      const run = await runCli(dirs, ['toolset', 'show', 'x']);
      expect(run.code).toBe(1);
      expect(linesOf(run.stderr)).toEqual([
        `loadout: ${path.join(dirs.configDir, 'toolsets', 'x.yaml')}:2:1: unknown key 'tool' (did you mean 'tools'?)`,
      ]);
    });
  });
});
