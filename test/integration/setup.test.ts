// `loadout setup <client>` against realistic copies of Claude Code's ~/.claude.json and .mcp.json
// (and VS Code's, Cursor's and Claude Desktop's files) in a temp HOME, with the real CLI.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { linesOf, runCli, type CliRun } from '../helpers/cli.js';
import {
  CLI,
  META_TOOL_NAMES,
  ROOT,
  eventually,
  fixture,
  makeTempDirs,
  textOf,
  writeServersYaml,
  type TempDirs,
} from '../helpers/gateway.js';

type ClaudeJson = {
  mcpServers: Record<string, { command?: string; args?: string[]; alwaysLoad?: boolean }>;
  projects: Record<string, { mcpServers: Record<string, unknown> }>;
  [key: string]: unknown;
};

describe('loadout setup', () => {
  let dirs: TempDirs;
  let home: string;
  let project: string;
  let bin: string;
  const claudeJson = () => path.join(home, '.claude.json');
  const mcpJson = () => path.join(project, '.mcp.json');
  const readJson = async <T>(file: string) => JSON.parse(await readFile(file, 'utf8')) as T;
  const serversYaml = async () =>
    parse(await readFile(path.join(dirs.configDir, 'servers.yaml'), 'utf8')) as { servers: Record<string, Record<string, unknown>> };
  // PATH holds only `bin`: no real `claude` (or `loadout`) on this machine can take part. The
  // fixture's remote servers are on the internet, so discovery is left out unless a test asks.
  // GITHUB_TOKEN, which the fixture's github entry uses, is unset whatever the machine's environment holds.
  const setup = (args: string[], { discover = false } = {}): Promise<CliRun> =>
    runCli(dirs, ['setup', ...args, ...(discover ? [] : ['--no-discover'])], { cwd: project, env: { PATH: bin, GITHUB_TOKEN: '' } });
  const unsetToken = () =>
    `  github: uses \${GITHUB_TOKEN}, not set; fix: set GITHUB_TOKEN in ${path.join(dirs.configDir, 'secrets.env')} (NAME=value lines) or the environment loadout starts in (your shell, or the client's "env" for loadout), or write \${GITHUB_TOKEN:-default}`;

  // Start loadout as Claude Code would, from the entry setup left in ~/.claude.json.
  const connectAsClaudeCode = async (): Promise<Client> => {
    const entry = (await readJson<ClaudeJson>(claudeJson())).mcpServers.loadout!;
    const client = new Client({ name: 'claude-code-stand-in', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: entry.command!,
        args: entry.args,
        env: { ...(process.env as Record<string, string>), HOME: home },
        stderr: 'ignore',
      }),
    );
    return client;
  };

  // A setup run whose stdin the test holds: it can answer the question, or not.
  const startSetup = (args: string[]) => {
    const child = spawn(process.execPath, [CLI, '--config', dirs.configDir, '--data', dirs.dataDir, 'setup', ...args], {
      cwd: project,
      env: { ...process.env, HOME: home, PATH: bin, NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    return { child, stderr: () => stderr, exited };
  };

  beforeEach(async () => {
    dirs = await makeTempDirs();
    home = path.join(dirs.root, 'home');
    project = path.join(dirs.root, 'project');
    bin = path.join(dirs.root, 'bin');
    await Promise.all([mkdir(home), mkdir(project), mkdir(bin)]);
    const template = await readFile(path.join(ROOT, 'test/fixtures/clients/claude.json'), 'utf8');
    await writeFile(
      claudeJson(),
      template.replaceAll('__PROJECT__', project).replaceAll('__NODE__', process.execPath).replaceAll('__ECHO__', fixture('echo')),
    );
    await writeFile(mcpJson(), await readFile(path.join(ROOT, 'test/fixtures/clients/mcp.json'), 'utf8'));
  });
  afterEach(async () => {
    await dirs.cleanup();
  });

  it('--move --yes leaves Claude Code with loadout alone, servers.yaml with every server, and loadout serving them', async () => {
    const before = await readJson<ClaudeJson>(claudeJson());
    const run = await setup(['claude-code', '--move', '--yes']);
    expect(run.stderr).toBe('');
    // Applied, so 0; what the user still has to set is said last, with where.
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`\nDone, but github will not start until you set what it uses:\n${unsetToken()}\nRestart Claude Code`);
    expect(run.stdout).not.toContain('Done. Restart');

    const after = await readJson<ClaudeJson>(claudeJson());
    expect(Object.keys(after.mcpServers)).toEqual(['loadout']);
    expect(after.projects[project]!.mcpServers).toEqual({});
    expect((await readJson<{ mcpServers: object }>(mcpJson())).mcpServers).toEqual({});
    // Everything else in the file is as it was: other projects, history, settings.
    expect({ ...after, mcpServers: before.mcpServers, projects: { ...after.projects, [project]: before.projects[project] } }).toEqual(
      before,
    );

    const { servers } = await serversYaml();
    expect(Object.keys(servers).sort()).toEqual(['echo', 'filesystem', 'github', 'linear', 'memory', 'sentry']);
    expect(servers.github).toMatchObject({ command: 'npx', env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${GITHUB_TOKEN}' } });
    expect(servers.sentry).toMatchObject({ type: 'sse', url: 'https://mcp.sentry.dev/sse' });

    // The entry Claude Code now has starts loadout, which serves the moved servers' tools, and
    // keeps loadout's tools out of Claude Code's tool search.
    expect(after.mcpServers.loadout!.alwaysLoad).toBe(true);
    const client = await connectAsClaudeCode();
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(META_TOOL_NAMES);
      const found = await client.callTool({ name: 'discover-all-tools', arguments: { server: 'echo' } });
      expect(JSON.stringify(found.content)).toContain('echo');
    } finally {
      await client.close();
    }
  });

  it('--dry-run prints the diff and changes nothing', async () => {
    const claudeBefore = await readFile(claudeJson(), 'utf8');
    const mcpBefore = await readFile(mcpJson(), 'utf8');
    const run = await setup(['claude-code', '--move', '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`--- ${claudeJson()}`);
    expect(run.stdout).toMatch(/^-\s+"github": \{$/m);
    expect(run.stdout).toMatch(/^\+\s+"loadout": \{$/m);
    expect(run.stdout).toContain('Dry run: nothing was changed.');
    expect(run.stdout).toContain(`\ngithub will not start until you set what it uses:\n${unsetToken()}\n`);
    const json = JSON.parse((await setup(['claude-code', '--move', '--dry-run', '--json'])).stdout) as { problems: unknown[] };
    expect(json.problems).toEqual([expect.objectContaining({ server: 'github', code: 'ENV_NOT_SET' })]);
    expect(await readFile(claudeJson(), 'utf8')).toBe(claudeBefore);
    expect(await readFile(mcpJson(), 'utf8')).toBe(mcpBefore);
    await expect(readFile(path.join(dirs.configDir, 'servers.yaml'))).rejects.toThrow(/ENOENT/);
    // Not even the data dir's owner mark is written.
    expect(await readdir(dirs.dataDir, { recursive: true })).toEqual([]);
    expect(await readdir(dirs.configDir, { recursive: true })).toEqual([]);
  });

  it('keeps the files formatting: only the changed lines differ, tabs stay tabs', async () => {
    expect((await setup(['claude-code', '--move', '--yes'])).code).toBe(0);
    expect(await readFile(mcpJson(), 'utf8')).toBe('{\n\t"mcpServers": {\n\t}\n}\n');
    const claude = await readFile(claudeJson(), 'utf8');
    // The other project's block is byte for byte the same text.
    const other = (await readFile(path.join(ROOT, 'test/fixtures/clients/claude.json'), 'utf8')).match(
      / {4}"\/home\/someone\/other-project"[\s\S]*?\n {4}\}/,
    )![0];
    expect(other).toContain('server-postgres');
    expect(claude).toContain(other);
  });

  it('uses `claude mcp add-json` (with alwaysLoad) when the claude CLI is on the PATH, and still moves the servers', async () => {
    const calls = path.join(dirs.root, 'claude-calls.json');
    await writeFile(
      path.join(bin, 'claude'),
      `#!${process.execPath}\nrequire('node:fs').appendFileSync(${JSON.stringify(calls)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`,
    );
    await chmod(path.join(bin, 'claude'), 0o755);
    const run = await setup(['claude-code', '--move', '--yes']);
    expect(run.code).toBe(0);
    const recorded = (await readFile(calls, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);
    expect(recorded).toEqual([['mcp', 'add-json', '--scope', 'user', 'loadout', expect.any(String)]]);
    expect(JSON.parse(recorded[0]![5]!)).toEqual({
      command: process.execPath,
      args: [CLI, '--config', dirs.configDir, '--data', dirs.dataDir, 'serve'],
      alwaysLoad: true,
    });
    // The CLI adds loadout; setup itself only took the servers out.
    expect((await readJson<ClaudeJson>(claudeJson())).mcpServers).toEqual({});
  });

  it('refuses when the file changes between reading it and writing it, and keeps the other program’s version', async () => {
    const { child, stderr, exited } = startSetup(['claude-code', '--move']);
    await eventually(() => stderr().includes('Apply these changes?'), 20_000, 'the question');
    // Claude Code writes its file while the question waits.
    const edited = (await readFile(claudeJson(), 'utf8')).replace('"numStartups": 184', '"numStartups": 185');
    await writeFile(claudeJson(), edited);
    child.stdin.end('y\n');
    expect(await exited).toBe(1);
    expect(stderr()).toContain(`${claudeJson()} changed while loadout was preparing its edit`);
    expect(await readFile(claudeJson(), 'utf8')).toBe(edited);
    await expect(readFile(path.join(dirs.configDir, 'servers.yaml'))).rejects.toThrow(/ENOENT/);
  });

  it('asks first: with no answer it changes nothing and exits 1', async () => {
    const before = await readFile(claudeJson(), 'utf8');
    const { child, stderr, exited } = startSetup(['claude-code', '--move']);
    child.stdin.end();
    expect(await exited).toBe(1);
    expect(stderr()).toContain('nothing was changed (answer y, or pass --yes');
    expect(await readFile(claudeJson(), 'utf8')).toBe(before);
  });

  it('refuses a file it cannot parse, naming line and column', async () => {
    const broken = (await readFile(claudeJson(), 'utf8')).replace('"autoUpdates": true,', '"autoUpdates": true,,');
    await writeFile(claudeJson(), broken);
    const run = await setup(['claude-code', '--move', '--yes']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`loadout: ${claudeJson()}:4:23: PropertyNameExpected; loadout does not change a file it cannot parse`);
    expect(await readFile(claudeJson(), 'utf8')).toBe(broken);
  });

  it('--undo restores the files byte for byte from the timestamped backup', async () => {
    const claudeBefore = await readFile(claudeJson(), 'utf8');
    const mcpBefore = await readFile(mcpJson(), 'utf8');
    const run = await setup(['claude-code', '--move', '--yes']);
    expect(run.stdout).toMatch(/Backup of the previous files: .*backups[/\\]claude-code[/\\]\d{4}-\d\d-\d\dT/);
    expect(await readdir(path.join(dirs.dataDir, 'backups', 'claude-code'))).toHaveLength(1);
    // Claude Code rewrites its file after setup: undo says those changes go too.
    await writeFile(claudeJson(), (await readFile(claudeJson(), 'utf8')).replace('"numStartups": 184', '"numStartups": 185'));
    const undo = await setup(['claude-code', '--undo', '--yes']);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain(`Note: ${claudeJson()} was changed after setup wrote it`);
    expect(undo.stdout).not.toContain(`Note: ${mcpJson()}`);
    expect(await readFile(claudeJson(), 'utf8')).toBe(claudeBefore);
    expect(await readFile(mcpJson(), 'utf8')).toBe(mcpBefore);
    expect((await setup(['claude-code', '--undo', '--yes'])).stderr).toContain('no backup of claude-code');
  });

  it('adds to an existing servers.yaml only what it lacks, keeps a different server of the same name in the client, and a second run has nothing to do', async () => {
    await writeServersYaml(dirs.configDir, {
      mine: { command: 'my-server' },
      gh: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] },
      linear: { type: 'http', url: 'https://example.test/other-linear' },
    });
    const run = await setup(['claude-code', '--move', '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Claude Code user scope (~/.claude.json): 'github' is already in servers.yaml as 'gh'");
    expect(run.stdout).toContain(
      "Claude Code user scope (~/.claude.json): keeping 'linear' in Claude Code: a different server named 'linear' is in servers.yaml",
    );
    const { servers } = await serversYaml();
    expect(Object.keys(servers)).toEqual(['mine', 'gh', 'linear', 'memory', 'filesystem', 'sentry', 'echo']);
    expect(servers.linear).toEqual({ type: 'http', url: 'https://example.test/other-linear' });
    expect(Object.keys((await readJson<ClaudeJson>(claudeJson())).mcpServers)).toEqual(['linear', 'loadout']);
    const again = await setup(['claude-code', '--move', '--yes']);
    expect(again.stdout).toContain('Nothing to change.');
  });

  it('vscode: "servers" key, comments kept, ${input:} servers stay, loadout added with type stdio', async () => {
    await mkdir(path.join(project, '.vscode'));
    const workspaceFile = path.join(project, '.vscode', 'mcp.json');
    await writeFile(workspaceFile, await readFile(path.join(ROOT, 'test/fixtures/clients/vscode-mcp.json'), 'utf8'));
    const run = await setup(['vscode', '--move', '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("keeping 'search' in VS Code: uses VS Code's own ${…} variables");
    const workspace = await readFile(workspaceFile, 'utf8');
    expect(workspace).toContain('// Workspace MCP servers for this repo');
    expect(workspace).toContain("// Needs VS Code's prompt for its key: stays here.");
    expect(workspace).toContain('"search": {');
    expect(workspace).not.toContain('"memory"');
    const user = await readJson<{ servers: Record<string, { type: string; command: string }> }>(
      path.join(home, '.config', 'Code', 'User', 'mcp.json'),
    );
    expect(user.servers.loadout).toMatchObject({ type: 'stdio', command: process.execPath });
    expect(user.servers.loadout).not.toHaveProperty('alwaysLoad');
    expect(Object.keys((await serversYaml()).servers)).toEqual(['memory']);
  });

  it.each([
    ['cursor', ['.cursor', 'mcp.json']],
    ['claude-desktop', ['.config', 'Claude', 'claude_desktop_config.json']],
  ])('%s: moves the servers of its mcpServers file and adds loadout there', async (client, file) => {
    const config = path.join(home, ...file);
    await mkdir(path.dirname(config), { recursive: true });
    await writeFile(
      config,
      JSON.stringify(
        { globalShortcut: 'Ctrl+Space', mcpServers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } } },
        null,
        2,
      ),
    );
    expect((await setup([client, '--move', '--yes'])).code).toBe(0);
    const after = await readJson<{ globalShortcut: string; mcpServers: Record<string, unknown> }>(config);
    expect(after.globalShortcut).toBe('Ctrl+Space');
    expect(Object.keys(after.mcpServers)).toEqual(['loadout']);
    // alwaysLoad is Claude Code's.
    expect(after.mcpServers.loadout).not.toHaveProperty('alwaysLoad');
    expect(Object.keys((await serversYaml()).servers)).toEqual(['memory']);
  });
  it('gemini: moves the servers of ~/.gemini/settings.json (an httpUrl one too), keeps its other settings, says what Gemini CLI needs, and --undo restores it', async () => {
    const settings = path.join(home, '.gemini', 'settings.json');
    await mkdir(path.dirname(settings), { recursive: true });
    const before = `${JSON.stringify(
      {
        security: { auth: { selectedType: 'gemini-api-key' } },
        mcpServers: {
          memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], trust: true },
          docs: { httpUrl: 'https://docs.example.com/mcp', headers: { 'X-Team': 'a' } },
        },
      },
      null,
      2,
    )}\n`;
    await writeFile(settings, before);
    const dryRun = await setup(['gemini', '--move', '--dry-run']);
    expect(dryRun.code).toBe(0);
    expect(await readFile(settings, 'utf8')).toBe(before);
    const run = await setup(['gemini', '--move', '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Gemini CLI re-reads its tool list after an equip by itself: no setting is needed.');
    const after = await readJson<{ security: unknown; mcpServers: Record<string, { command?: string }> }>(settings);
    expect(after.security).toEqual({ auth: { selectedType: 'gemini-api-key' } });
    expect(Object.keys(after.mcpServers)).toEqual(['loadout']);
    expect(after.mcpServers.loadout).toMatchObject({ command: process.execPath });
    expect((await serversYaml()).servers).toEqual({
      memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] },
      docs: { type: 'http', url: 'https://docs.example.com/mcp', headers: { 'X-Team': 'a' } },
    });
    expect((await setup(['gemini', '--undo', '--yes'])).code).toBe(0);
    expect(await readFile(settings, 'utf8')).toBe(before);
  });

  it('codex: moves the [mcp_servers.*] tables of ~/.codex/config.toml, keeps its comments and settings, says what Codex CLI needs, and --undo restores it', async () => {
    const config = path.join(home, '.codex', 'config.toml');
    await mkdir(path.dirname(config), { recursive: true });
    const before = [
      '# my Codex settings',
      'model = "gpt-5.1-codex"',
      'approval_policy = "on-request"',
      '',
      '[mcp_servers.memory]',
      'command = "npx"',
      'args = ["-y", "@modelcontextprotocol/server-memory"]',
      '',
      '[mcp_servers.memory.env]',
      'MEMORY_FILE = "/tmp/memory.json"',
      '',
      '# the team docs',
      '[mcp_servers.docs]',
      'url = "https://docs.example.com/mcp"',
      'bearer_token_env_var = "DOCS_TOKEN"',
      '',
      '[features]',
      'web_search = true',
      '',
    ].join('\n');
    await writeFile(config, before);
    const dryRun = await setup(['codex', '--move', '--dry-run']);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('+[mcp_servers.loadout]');
    expect(await readFile(config, 'utf8')).toBe(before);
    const run = await setup(['codex', '--move', '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('default_tools_approval_mode = "approve"');
    expect(run.stdout).toContain('mcp_tool_list_changed');
    const after = await readFile(config, 'utf8');
    expect(after).toMatch(/^# my Codex settings\nmodel = "gpt-5\.1-codex"\napproval_policy = "on-request"\n/);
    expect(after).toContain('[features]\nweb_search = true\n');
    expect(after).not.toContain('mcp_servers.memory');
    expect(after).not.toContain('mcp_servers.docs');
    // A moved table's comment goes with it.
    expect(after).not.toContain('# the team docs');
    expect(after).toContain(`[mcp_servers.loadout]\ncommand = ${JSON.stringify(process.execPath)}\n`);
    expect((await serversYaml()).servers).toEqual({
      memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { MEMORY_FILE: '/tmp/memory.json' } },
      docs: { type: 'http', url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
    });
    expect((await setup(['codex', '--move', '--yes'])).stdout).toContain('Nothing to change.');
    expect((await setup(['codex', '--undo', '--yes'])).code).toBe(0);
    expect(await readFile(config, 'utf8')).toBe(before);
  });

  it('codex: reads and edits $CODEX_HOME/config.toml when CODEX_HOME is set, not ~/.codex', async () => {
    const codexHome = path.join(dirs.root, 'codex-home');
    const config = path.join(codexHome, 'config.toml');
    await mkdir(codexHome);
    await writeFile(config, '# mine\n\n[mcp_servers.memory]\ncommand = "npx"\n\n[features]\nweb_search = true\n');
    const run = await runCli(dirs, ['setup', 'codex', '--move', '--yes', '--no-discover'], {
      cwd: project,
      env: { PATH: bin, CODEX_HOME: codexHome },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(config);
    expect(await readFile(config, 'utf8')).toMatch(/^# mine\n\n\[features\]\nweb_search = true\n\n\[mcp_servers\.loadout\]\ncommand = /);
    expect((await serversYaml()).servers).toEqual({ memory: { command: 'npx' } });
    await expect(stat(path.join(home, '.codex'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('codex: refuses a config.toml it cannot parse, or whose servers are not tables of their own, and changes nothing', async () => {
    const config = path.join(home, '.codex', 'config.toml');
    await mkdir(path.dirname(config), { recursive: true });
    await writeFile(config, 'model = "x"\n[mcp_servers.memory\ncommand = "npx"\n');
    const broken = await setup(['codex', '--move', '--yes']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/config\.toml:2:\d+: .*loadout does not change a file it cannot parse/);
    const inline = 'mcp_servers = { memory = { command = "npx" } }\n';
    await writeFile(config, inline);
    const refused = await setup(['codex', '--move', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[mcp_servers.memory] is not written as a table of its own');
    expect(await readFile(config, 'utf8')).toBe(inline);
  });

  describe('leaves a working catalog and no readable secret', () => {
    // Local servers only: one that works and one whose program is not installed.
    const writeClaudeJson = async (servers: Record<string, unknown>) => {
      await writeFile(claudeJson(), JSON.stringify({ numStartups: 3, mcpServers: servers }, null, 2), { mode: 0o600 });
      await writeFile(mcpJson(), '{"mcpServers": {}}\n');
    };
    const echoEntry = (env: Record<string, string> = {}) => ({ type: 'stdio', command: process.execPath, args: [fixture('echo')], env });
    const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

    it('discovers the servers it imported, one stderr line per server, so status, search and list know their tools', async () => {
      await writeClaudeJson({ echo: echoEntry(), missing: { command: 'no-such-mcp-server' } });
      const run = await setup(['claude-code', '--move', '--yes'], { discover: true });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^echo +ok +5 /m);
      expect(run.stdout).toMatch(/^missing +failed /m);
      // stderr is not a terminal here: a plain line per server instead of a progress bar.
      expect(run.stderr).toMatch(/^loadout: discovered echo: 5 tools \(\d+ ms\)$/m);
      expect(run.stderr).toMatch(/^loadout: missing: not discovered: /m);

      const status = JSON.parse((await runCli(dirs, ['status', '--json'])).stdout) as {
        servers: Array<{ name: string; discovered: boolean }>;
      };
      expect(status.servers.find((server) => server.name === 'echo')?.discovered).toBe(true);
      const search = await runCli(dirs, ['search', 'return the text unchanged']);
      expect(search.stdout).toMatch(/^ +1\. echo\.echo — /m);
      expect(search.stdout).toContain('1 of 2 servers is not discovered yet (missing); run "loadout refresh"');
      expect((await runCli(dirs, ['list'])).stdout).toContain('1 of 2 servers is not discovered yet (missing); run "loadout refresh"');
    });

    it('with --no-discover, search and list say the catalog is not discovered and name loadout refresh, never "no match"', async () => {
      await writeClaudeJson({ echo: echoEntry(), missing: { command: 'no-such-mcp-server' } });
      expect((await setup(['claude-code', '--move', '--yes'])).code).toBe(0);
      const search = await runCli(dirs, ['search', 'read a file']);
      expect(search.code).toBe(0);
      expect(search.stdout).not.toContain('No tool matches');
      expect(search.stdout.trim()).toBe(
        'No tools to search yet: 2 of 2 servers are not discovered yet (echo, missing); run "loadout refresh"',
      );
      const list = await runCli(dirs, ['list']);
      expect(list.stdout.trim()).toBe('No tools to list yet: 2 of 2 servers are not discovered yet (echo, missing); run "loadout refresh"');
    });

    it('moves literal secrets into a 0600 secrets.env, writes servers.yaml 0600 naming setup, and the server still gets its token', async () => {
      await writeClaudeJson({
        echo: echoEntry({ ECHO_API_TOKEN: 'tok-literal-123', LOG_LEVEL: 'debug', GITHUB_TOKEN: '${GITHUB_TOKEN:-none}' }),
        remote: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer hdr-literal-456', 'X-Trace': 'on' } },
      });
      const run = await setup(['claude-code', '--move', '--yes'], { discover: true });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        `Moving 2 literal secrets out of servers.yaml into ${path.join(dirs.configDir, 'secrets.env')} (mode 0600): echo env ECHO_API_TOKEN → \${ECHO_API_TOKEN}, remote headers Authorization → \${REMOTE_AUTHORIZATION}`,
      );
      const yamlFile = path.join(dirs.configDir, 'servers.yaml');
      const yamlText = await readFile(yamlFile, 'utf8');
      expect(yamlText).toMatch(/^# Written by "loadout setup claude-code" from: /);
      expect(yamlText).not.toMatch(/literal-(123|456)/);
      expect(await modeOf(yamlFile)).toBe(0o600);
      const { servers } = await serversYaml();
      expect(servers.echo!.env).toEqual({ ECHO_API_TOKEN: '${ECHO_API_TOKEN}', LOG_LEVEL: 'debug', GITHUB_TOKEN: '${GITHUB_TOKEN:-none}' });
      expect(servers.remote!.headers).toEqual({ Authorization: 'Bearer ${REMOTE_AUTHORIZATION}', 'X-Trace': 'on' });
      const secretsFile = path.join(dirs.configDir, 'secrets.env');
      expect(await modeOf(secretsFile)).toBe(0o600);
      expect(linesOf(await readFile(secretsFile, 'utf8')).filter((line) => !line.startsWith('#'))).toEqual([
        'ECHO_API_TOKEN=tok-literal-123',
        'REMOTE_AUTHORIZATION=hdr-literal-456',
      ]);
      // Discovery started echo with its token: a refresh rewrite keeps servers.yaml private.
      expect(Object.keys(servers.echo!.tools ?? {})).toContain('env');
      expect(await modeOf(yamlFile)).toBe(0o600);

      const client = await connectAsClaudeCode();
      try {
        const envOf = async (name: string) =>
          textOf(await client.callTool({ name: 'call-tool', arguments: { tool: 'echo.env', arguments: { name } } }));
        expect(await envOf('ECHO_API_TOKEN')).toBe('tok-literal-123');
        // Another server's secret is not in this server's environment.
        expect(await envOf('REMOTE_AUTHORIZATION')).toBe('(unset)');
      } finally {
        await client.close();
      }
    });

    it('--keep-secrets leaves literal secrets in servers.yaml, still mode 0600, and says so', async () => {
      await writeClaudeJson({ echo: echoEntry({ ECHO_API_TOKEN: 'tok-literal-123' }) });
      const run = await setup(['claude-code', '--move', '--yes', '--keep-secrets']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('servers.yaml keeps 1 literal secret (--keep-secrets): echo env ECHO_API_TOKEN');
      expect((await serversYaml()).servers.echo!.env).toEqual({ ECHO_API_TOKEN: 'tok-literal-123' });
      expect(await modeOf(path.join(dirs.configDir, 'servers.yaml'))).toBe(0o600);
      await expect(stat(path.join(dirs.configDir, 'secrets.env'))).rejects.toThrow(/ENOENT/);
    });

    it('keeps a one-line ~/.claude.json on one line', async () => {
      await writeFile(claudeJson(), `${JSON.stringify({ numStartups: 3, mcpServers: { echo: echoEntry() } })}\n`);
      await writeFile(mcpJson(), '{"mcpServers": {}}\n');
      expect((await setup(['claude-code', '--move', '--yes'])).code).toBe(0);
      const after = await readFile(claudeJson(), 'utf8');
      expect(after.trimEnd().split('\n')).toHaveLength(1);
      expect(Object.keys((JSON.parse(after) as ClaudeJson).mcpServers)).toEqual(['loadout']);
    });

    it('hides literal secrets in every diff: --dry-run, --json, the run itself and --undo', async () => {
      const token = 'ghp_r3alL00kingT0ken4711';
      await writeClaudeJson({
        github: echoEntry({ GITHUB_PERSONAL_ACCESS_TOKEN: token }),
        remote: { type: 'http', url: 'https://user:pa55word-x@mcp.example.com/mcp', headers: { Authorization: 'Bearer sk-b3arer-secret' } },
        flagged: { command: 'npx', args: ['some-server', '--api-key', 'sk-fl4g-secret', '--token=tk-inl1ne-secret'] },
      });
      const secrets = [token, 'pa55word-x', 'sk-b3arer-secret', 'sk-fl4g-secret', 'tk-inl1ne-secret'];
      const runs = [
        await setup(['claude-code', '--move', '--dry-run']),
        await setup(['claude-code', '--move', '--dry-run', '--json']),
        await setup(['claude-code', '--move', '--yes', '--keep-secrets']),
        await setup(['claude-code', '--undo', '--yes']),
      ];
      for (const run of runs) {
        expect(run.code).toBe(0);
        expect(run.stdout).toContain('[hidden]');
        for (const secret of secrets) expect(run.stdout, secret).not.toContain(secret);
      }
      expect(runs[0]!.stdout).toMatch(/^-\s+"GITHUB_PERSONAL_ACCESS_TOKEN": "\[hidden\]"$/m);
      // The files themselves still hold the values: only what is shown is masked.
      expect(await readFile(claudeJson(), 'utf8')).toContain(token);
    });
  });
});
