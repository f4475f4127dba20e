// The CLI where a user meets its edges: output piped into `head`, whole multi-line errors, a whole
// command line in `command`, an empty `tools:` key, --log-format, several servers for refresh.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linesOf, runCli } from '../helpers/cli.js';
import { CLI, fixture, makeTempDirs, nodeServer, startGateway, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { writeToolCache } from '../helpers/lifecycle.js';

// `loadout ARGS | head -n 1` through a real shell pipe; what loadout wrote to stderr and its exit code.
function pipedIntoHead(dirs: TempDirs, args: string[]): Promise<{ firstLine: string; stderr: string; code: string }> {
  const quoted = [process.execPath, CLI, '--config', dirs.configDir, '--data', dirs.dataDir, ...args].map((arg) => `'${arg}'`).join(' ');
  // PIPESTATUS is bash's; the exit code of loadout (not head) is what matters.
  const script = `${quoted} 2>"${dirs.root}/stderr" | head -n 1; echo "exit=\${PIPESTATUS[0]}" >&2; cat "${dirs.root}/stderr" >&2`;
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      { env: { ...process.env, HOME: path.join(dirs.root, 'home'), NO_COLOR: '1' }, timeout: 60_000 },
      (_error, stdout, stderr) => {
        const code = /exit=(\d+)/.exec(stderr)?.[1] ?? '?';
        resolve({ firstLine: stdout.trim(), stderr: stderr.replace(/exit=\d+\n/, ''), code });
      },
    );
  });
}

describe('CLI edges', () => {
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await mkdir(path.join(dirs.root, 'home'));
  });
  afterEach(async () => {
    await dirs.cleanup();
  });

  it('exits quietly when the reader of its output goes away (`list | head`, `toolset show | head`)', async () => {
    // Far more than a pipe holds, so loadout is still writing when head has gone.
    const tools = Array.from({ length: 3000 }, (_, i) => ({
      name: `tool_${i}`,
      description: `Tool number ${i} ${'with a long description '.repeat(4)}`,
      inputSchema: { type: 'object' as const },
    }));
    await writeServersYaml(dirs.configDir, { big: { command: process.execPath, args: ['-e', ''] } });
    await writeToolCache(dirs.dataDir, { big: tools });
    for (const args of [['list'], ['list', '--json'], ['status']]) {
      const run = await pipedIntoHead(dirs, args);
      expect(run.stderr, args.join(' ')).toBe('');
      expect(run.code, args.join(' ')).toBe('0');
      expect(run.firstLine.length).toBeGreaterThan(0);
    }
    expect((await runCli(dirs, ['toolset', 'create', 'many', ...tools.slice(0, 1500).map((tool) => `big.${tool.name}`)])).code).toBe(0);
    const shown = await pipedIntoHead(dirs, ['toolset', 'show', 'many']);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe('0');
  });

  it('refuses a whole command line in `command` before starting anything, with the entry as it should be written', async () => {
    await writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      'servers:\n  pkg:\n    command: "no-such-npx -y some-pkg"\n    args: [--flag]\n',
    );
    const run = await runCli(dirs, ['refresh']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `servers.yaml:3:14: "no-such-npx -y some-pkg" is a whole command line; \`command\` is the program alone and \`args\` its arguments: write command: "no-such-npx" and args: ["-y","some-pkg","--flag"] at servers.pkg.command`,
    );
    expect(run.stderr).not.toContain('ENOENT');
  });

  it('starts a program whose own path has a space in it', async () => {
    const folder = path.join(dirs.root, 'My Servers');
    await mkdir(folder);
    const program = path.join(folder, 'echo server');
    await writeFile(program, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(fixture('echo'))}\n`, { mode: 0o755 });
    await writeFile(path.join(dirs.configDir, 'servers.yaml'), `servers:\n  spaced:\n    command: ${JSON.stringify(program)}\n`);
    const run = await runCli(dirs, ['refresh']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^│? *spaced *│? *ok *│? *5 /m);
  });

  it('accepts an empty `tools:` key as no tools listed yet, and fills it on refresh', async () => {
    await writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      `servers:\n  echo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(fixture('echo'))}]\n    tools:\n`,
    );
    const status = await runCli(dirs, ['status', '--json']);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    const refreshed = await runCli(dirs, ['refresh']);
    expect(refreshed.code).toBe(0);
    expect(await readFile(path.join(dirs.configDir, 'servers.yaml'), 'utf8')).toMatch(/tools:\n\s+echo:/);
  });

  it('writes stderr in one format per run: readable lines by default, JSON lines with --log-format json', async () => {
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      broken: { command: path.join(dirs.root, 'no-such-binary') },
    });
    for (const format of ['human', 'json'] as const) {
      const gateway = await startGateway({ dirs, args: format === 'json' ? ['--log-format', 'json'] : [] });
      await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
      await gateway.close();
      const lines = linesOf(gateway.stderr());
      expect(lines.some((line) => line.includes('broken'))).toBe(true);
      for (const line of lines) {
        if (format === 'human') expect(line).toMatch(/^loadout: /);
        else expect(JSON.parse(line)).toMatchObject({ level: expect.any(Number), msg: expect.any(String) });
      }
    }
    expect(
      linesOf((await runCli(dirs, ['--log-format', 'json', 'toolset', 'show', 'nope'])).stderr).map((line) => JSON.parse(line) as unknown),
    ).toEqual([expect.objectContaining({ level: 50, msg: expect.stringContaining("Toolset 'nope' not found") })]);
    const usage = await runCli(dirs, ['--log-format', 'json', 'list', '--no-such-flag']);
    expect(linesOf(usage.stderr).map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({ level: 50, msg: expect.stringContaining('--no-such-flag') }),
    ]);
  });

  it('refreshes several named servers, or every one with --all, and refuses both at once', async () => {
    const servers = { a: nodeServer(fixture('echo')), b: nodeServer(fixture('echo')), c: nodeServer(fixture('echo')) };
    await writeServersYaml(dirs.configDir, servers);
    const some = await runCli(dirs, ['refresh', 'a', 'c', '--json']);
    expect(some.code, some.stderr).toBe(0);
    expect((JSON.parse(some.stdout) as { results: Array<{ server: string }> }).results.map((result) => result.server)).toEqual(['a', 'c']);
    const all = await runCli(dirs, ['refresh', '--all', '--json']);
    expect((JSON.parse(all.stdout) as { results: Array<{ server: string }> }).results.map((result) => result.server)).toEqual([
      'a',
      'b',
      'c',
    ]);
    const both = await runCli(dirs, ['refresh', 'a', '--all']);
    expect(both.code).toBe(1);
    expect(linesOf(both.stderr)).toEqual(['loadout: give servers or --all, not both (got --all and a)']);
  });

  it('takes --json on every command but serve', async () => {
    const commands = [
      ['setup'],
      ['doctor'],
      ['search'],
      ['auth'],
      ['enrich'],
      ['init'],
      ['refresh'],
      ['status'],
      ['list'],
      ['toolset', 'list'],
      ['toolset', 'show'],
      ['toolset', 'create'],
      ['toolset', 'delete'],
      ['toolset', 'equip'],
      ['optimize', 'report'],
      ['optimize', 'run'],
      ['optimize', 'canonical'],
      ['optimize', 'propose'],
      ['optimize', 'prompts'],
      ['optimize', 'results'],
      ['optimize', 'promote'],
      ['optimize', 'revert'],
      ['optimize', 'generate-candidates'],
      ['optimize', 'generate-prompts'],
    ];
    const helps = await Promise.all(commands.map((command) => runCli(dirs, [...command, '--help'])));
    helps.forEach((help, index) => expect(help.stdout, commands[index]!.join(' ')).toMatch(/^\s+--json\b/m));
  });

  it('lists the tools servers.yaml names even before their definitions are cached (a new data dir)', async () => {
    await writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      'servers:\n  github:\n    command: /usr/bin/run-github\n    tools:\n      search_repositories: { enabled: true }\n      delete_repository: { enabled: false }\n      old_tool: { enabled: true, stale: true }\n',
    );
    const listed = JSON.parse((await runCli(dirs, ['list', '--json'])).stdout) as Array<{ id: string; status: string[] }>;
    expect(Object.fromEntries(listed.map((tool) => [tool.id, tool.status.join(',')]))).toEqual({
      'github.search_repositories': 'enabled,not cached',
      'github.delete_repository': 'disabled,not cached',
      'github.old_tool': 'stale',
    });
  });

  // serve loads the other commands only when the command line names one (cli/main.ts): an option's
  // value that reads `serve` must not be taken for the command.
  it('runs another command when a global option has the value "serve"', async () => {
    const configDir = path.join(dirs.root, 'serve');
    await mkdir(configDir);
    await writeServersYaml(configDir, { echo: nodeServer('echo') });
    const run = await runCli({ ...dirs, configDir: 'serve' }, ['status', '--json'], { cwd: dirs.root });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(expect.objectContaining({ servers: expect.any(Array) }));
  });
});
