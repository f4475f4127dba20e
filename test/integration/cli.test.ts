import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { linesOf, mutableServer, runCli } from '../helpers/cli.js';
import { fixture, makeTempDirs, nodeServer, startGateway, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { META_TOOL_NAMES } from '../helpers/gateway.js';

type ServersYaml = {
  servers: Record<string, { tools?: Record<string, { enabled?: boolean; stale?: boolean; description?: string; hash?: string } | null> }>;
};

describe('loadout CLI', () => {
  let dirs: TempDirs;
  let own: TempDirs;
  const serversFile = () => path.join(dirs.configDir, 'servers.yaml');
  const readServers = async () => parse(await readFile(serversFile(), 'utf8')) as ServersYaml;
  beforeEach(async () => {
    own = await makeTempDirs();
    await mkdir(path.join(own.root, 'home'));
    dirs = own;
  });
  afterEach(async () => {
    await own.cleanup();
  });

  describe('init', () => {
    it('imports a .mcp.json given with --from (stdio and http) and discovers the stdio server', async () => {
      const from = path.join(dirs.root, 'clients.json');
      await writeFile(
        from,
        JSON.stringify({
          mcpServers: {
            echo: { command: process.execPath, args: [fixture('echo')], env: { TOKEN: '${TOKEN:-none}' } },
            remote: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${KEY}' } },
            loadout: { command: 'npx', args: ['loadout', 'serve'] },
          },
        }),
      );
      const run = await runCli(dirs, ['init', '--from', from]);
      const servers = await readServers();
      expect(Object.keys(servers.servers)).toEqual(['echo', 'remote']);
      expect(servers.servers.remote).toMatchObject({
        type: 'http',
        url: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: 'Bearer ${KEY}' },
      });
      expect(servers.servers.echo).toMatchObject({ env: { TOKEN: '${TOKEN:-none}' } });
      expect(Object.keys(servers.servers.echo!.tools ?? {})).toEqual(['echo', 'add', 'fail', 'env', 'pid']);
      expect(run.stdout).toContain("skipped 'loadout'");
      // The unreachable http server is reported, but the file is written: exit 0.
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/remote/);
    });

    it('moves a literal token into a 0600 secrets.env, prints a line per discovered server on stderr, and writes servers.yaml 0600', async () => {
      const from = path.join(dirs.root, 'clients.json');
      await writeFile(
        from,
        JSON.stringify({
          mcpServers: { echo: { command: process.execPath, args: [fixture('echo')], env: { API_KEY: 'key-literal-789' } } },
        }),
      );
      const run = await runCli(dirs, ['init', '--from', from]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        `Moved 1 literal secret out of servers.yaml into ${path.join(dirs.configDir, 'secrets.env')} (mode 0600): echo env API_KEY → \${API_KEY}`,
      );
      expect(linesOf(run.stderr)).toEqual([expect.stringMatching(/^loadout: discovered echo: 5 tools \(\d+ ms\)$/)]);
      const text = await readFile(serversFile(), 'utf8');
      expect(text).not.toContain('key-literal-789');
      expect((await stat(serversFile())).mode & 0o777).toBe(0o600);
      expect((await stat(path.join(dirs.configDir, 'secrets.env'))).mode & 0o777).toBe(0o600);
      expect(await readFile(path.join(dirs.configDir, 'secrets.env'), 'utf8')).toMatch(/^API_KEY=key-literal-789$/m);
    });

    it('moves a credential flag in args and a credential in a url into secrets.env, and the server still starts with its arguments', async () => {
      const from = path.join(dirs.root, 'clients.json');
      await writeFile(
        from,
        JSON.stringify({
          mcpServers: {
            echo: { command: process.execPath, args: [fixture('echo'), '--api-key', 'arg-literal-456'] },
            remote: { type: 'http', url: 'http://me:pw-literal-1@127.0.0.1:9/mcp?api_key=url-literal-123&region=eu' },
          },
        }),
      );
      const run = await runCli(dirs, ['init', '--from', from, '--no-discover', '--json']);
      expect(run.code).toBe(0);
      const { secrets } = JSON.parse(run.stdout) as {
        secrets: { moved: Array<{ server: string; field: string; key: string; variable: string }> };
      };
      expect(secrets.moved).toEqual([
        { server: 'echo', field: 'args', key: '--api-key', variable: 'ECHO_API_KEY' },
        { server: 'remote', field: 'url', key: 'password', variable: 'REMOTE_PASSWORD' },
        { server: 'remote', field: 'url', key: 'api_key', variable: 'REMOTE_API_KEY' },
      ]);
      const text = await readFile(serversFile(), 'utf8');
      for (const literal of ['arg-literal-456', 'url-literal-123', 'pw-literal-1']) expect(text).not.toContain(literal);
      expect(text).toContain('http://me:${REMOTE_PASSWORD}@127.0.0.1:9/mcp?api_key=${REMOTE_API_KEY}&region=eu');
      const secretsText = await readFile(path.join(dirs.configDir, 'secrets.env'), 'utf8');
      expect(secretsText).toMatch(/^ECHO_API_KEY=arg-literal-456$/m);
      expect(secretsText).toMatch(/^REMOTE_API_KEY=url-literal-123$/m);
      // The references resolve (no unset variable) and the stdio server starts with them.
      const doctor = await runCli(dirs, ['doctor', '--json']);
      const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ server?: string; check: string; ok: boolean; message: string }> })
        .findings;
      expect(findings.filter((finding) => finding.check === 'env')).toEqual([]);
      expect(findings.find((finding) => finding.server === 'echo' && finding.check === 'start')).toMatchObject({ ok: true });
    });

    it('moves a URL, a header and an env var given in args into secrets.env, and the server gets its exact arguments back', async () => {
      const args = [
        '--api-key',
        'key-literal-1',
        'postgresql://me:pg-literal-2@localhost/db',
        '--header',
        'Authorization: Bearer hdr-literal-3',
        '-e',
        'LOADOUT_TEST_TOKEN=env-literal-4',
      ];
      const from = path.join(dirs.root, 'clients.json');
      await writeFile(from, JSON.stringify({ mcpServers: { argv: { command: process.execPath, args: [fixture('argv'), ...args] } } }));
      const run = await runCli(dirs, ['init', '--from', from]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        'argv args --api-key → ${ARGV_API_KEY}, argv args password → ${ARGV_PASSWORD}, argv args Authorization → ${ARGV_AUTHORIZATION}, argv args LOADOUT_TEST_TOKEN → ${LOADOUT_TEST_TOKEN}',
      );
      const text = await readFile(serversFile(), 'utf8');
      expect(text).not.toMatch(/literal-\d/);
      const secretsFile = path.join(dirs.configDir, 'secrets.env');
      expect((await stat(secretsFile)).mode & 0o777).toBe(0o600);
      expect(linesOf(await readFile(secretsFile, 'utf8')).filter((line) => !line.startsWith('#'))).toEqual([
        'ARGV_API_KEY=key-literal-1',
        'ARGV_PASSWORD=pg-literal-2',
        'ARGV_AUTHORIZATION=hdr-literal-3',
        'LOADOUT_TEST_TOKEN=env-literal-4',
      ]);
      const gateway = await startGateway({ dirs });
      try {
        const result = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'argv.argv', arguments: {} } });
        expect(JSON.parse(textOf(result))).toEqual(args);
      } finally {
        await gateway.close();
      }
    });

    it('looks in ./.mcp.json, ~/.claude.json (user and this project) and Cursor, and says what it found', async () => {
      const project = path.join(dirs.root, 'project');
      await mkdir(project);
      await writeFile(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { echo: nodeServer(fixture('echo')) } }));
      await writeFile(
        path.join(dirs.root, 'home', '.claude.json'),
        JSON.stringify({
          mcpServers: { user: { command: 'user-server' } },
          projects: {
            [project]: { mcpServers: { local: { command: 'local-server' } } },
            '/elsewhere': { mcpServers: { other: { command: 'x' } } },
          },
        }),
      );
      await mkdir(path.join(dirs.root, 'home', '.cursor'));
      await writeFile(
        path.join(dirs.root, 'home', '.cursor', 'mcp.json'),
        JSON.stringify({ mcpServers: { 'docs.site': { url: 'https://example.com/sse' }, echo: { command: 'dup' } } }),
      );
      const run = await runCli(dirs, ['init', '--no-discover'], { cwd: project });
      expect(run.code).toBe(0);
      const servers = (await readServers()).servers;
      expect(Object.keys(servers)).toEqual(['echo', 'user', 'local', 'docs-site']);
      expect(servers['docs-site']).toMatchObject({ type: 'sse', url: 'https://example.com/sse' });
      expect(run.stdout).toContain('.claude.json');
      expect(run.stdout).toContain("skipped 'echo'");
      expect(run.stdout).not.toContain('other');
    });

    it('writes an empty, commented servers.yaml when no client config is found, and says where it looked', async () => {
      const run = await runCli(dirs, ['init']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/no MCP client config found \(looked in .*\.mcp\.json, .*\.claude\.json/);
      const text = await readFile(serversFile(), 'utf8');
      expect(text).toMatch(/^# Written by "loadout init"/);
      expect(parse(text)).toEqual({ servers: {} });
    });

    it('never overwrites an existing servers.yaml', async () => {
      await writeFile(serversFile(), '# mine\nservers: {}\n');
      const run = await runCli(dirs, ['init']);
      expect(run.code).not.toBe(0);
      expect(linesOf(run.stderr)).toEqual([expect.stringMatching(/^loadout: .*already exists/)]);
      expect(await readFile(serversFile(), 'utf8')).toBe('# mine\nservers: {}\n');
    });

    it('fails with one line for a missing or malformed --from file', async () => {
      const missing = await runCli(dirs, ['init', '--from', path.join(dirs.root, 'nope.json')]);
      expect(missing.code).not.toBe(0);
      expect(linesOf(missing.stderr)).toEqual([expect.stringMatching(/^loadout: .*nope\.json does not exist/)]);
      await writeFile(path.join(dirs.root, 'bad.json'), '{ not json');
      const bad = await runCli(dirs, ['init', '--from', path.join(dirs.root, 'bad.json')]);
      expect(bad.code).not.toBe(0);
      expect(linesOf(bad.stderr)).toEqual([expect.stringMatching(/^loadout: .*bad\.json is not valid JSON/)]);
      await expect(readFile(serversFile())).rejects.toThrow();
    });
  });

  describe('refresh', () => {
    it('smart-merges: user settings and comments kept, gone → stale, back → cleared, changed flagged until accepted', async () => {
      const tools = [{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }];
      await writeServersYaml(dirs.configDir, { m: await mutableServer(dirs.root, 'm', tools) });
      expect((await runCli(dirs, ['refresh'])).code).toBe(0);
      // The human switches one tool off, with a comment.
      const text = (await readFile(serversFile(), 'utf8')).replace(/(  beta:\n\s+enabled: )true/, '$1false # never');
      await writeFile(serversFile(), `# my config\n${text}`);

      await mutableServer(dirs.root, 'm', [
        { name: 'alpha', description: 'Now does something else.' },
        { name: 'beta' },
        { name: 'delta' },
      ]);
      const second = await runCli(dirs, ['refresh', 'm']);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/m: stale \(gone from the server\) gamma/);
      expect(second.stdout).toMatch(/m: added delta/);
      expect(second.stdout).toMatch(/m: changed upstream alpha/);
      const after = await readFile(serversFile(), 'utf8');
      expect(after).toContain('# my config');
      expect(after).toContain('enabled: false # never');
      const merged = (parse(after) as ServersYaml).servers.m!.tools!;
      expect(merged.gamma).toMatchObject({ stale: true, enabled: true });
      expect(merged.delta).toMatchObject({ enabled: true });
      expect(merged.alpha?.description).toBe('Now does something else.');

      // Every tool, exposed, filtered and stale alike; the flags narrow it.
      const listOf = async (...flags: string[]) =>
        JSON.parse((await runCli(dirs, ['list', ...flags, '--json'])).stdout) as Array<{ id: string; status: string[] }>;
      expect(Object.fromEntries((await listOf()).map((tool) => [tool.id, tool.status.join(',')]))).toEqual({
        'm.alpha': 'enabled,changed',
        'm.beta': 'disabled',
        'm.delta': 'enabled',
        'm.gamma': 'stale',
      });
      expect((await listOf('--enabled')).map((tool) => tool.id)).toEqual(['m.alpha', 'm.delta']);
      expect((await listOf('--disabled')).map((tool) => tool.id)).toEqual(['m.beta', 'm.gamma']);

      await mutableServer(dirs.root, 'm', [
        { name: 'alpha', description: 'Now does something else.' },
        { name: 'beta' },
        { name: 'gamma' },
        { name: 'delta' },
      ]);
      const third = await runCli(dirs, ['refresh', '--accept-changed']);
      expect(third.stdout).toMatch(/m: back gamma/);
      expect(third.stdout).toMatch(/m: approved alpha/);
      const final = (await readServers()).servers.m!.tools!;
      expect(final.gamma).not.toHaveProperty('stale');
      const status = JSON.parse((await runCli(dirs, ['status', '--json'])).stdout) as { servers: Array<{ tools: Record<string, number> }> };
      expect(status.servers[0]!.tools).toEqual({ enabled: 3, disabled: 1, stale: 0, changed: 0 });
    });

    it('never writes ${VAR} references expanded', async () => {
      await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo'), { env: { SECRET: '${LOADOUT_TEST_SECRET}' } }) });
      const run = await runCli(dirs, ['refresh'], { env: { LOADOUT_TEST_SECRET: 'hunter2' } });
      expect(run.code).toBe(0);
      const text = await readFile(serversFile(), 'utf8');
      expect(text).toContain('${LOADOUT_TEST_SECRET}');
      expect(text).not.toContain('hunter2');
    });

    it('reports a server that fails and still records the others, exiting non-zero', async () => {
      await writeServersYaml(dirs.configDir, {
        echo: nodeServer(fixture('echo')),
        broken: { command: path.join(dirs.root, 'no-such-binary') },
      });
      const run = await runCli(dirs, ['refresh']);
      expect(run.code).not.toBe(0);
      expect(linesOf(run.stderr)).toEqual([
        'loadout: 1 of 2 servers could not be discovered (broken):',
        expect.stringMatching(/^broken: Server 'broken' failed to start: no program at ".+no-such-binary": the file does not exist$/),
      ]);
      expect(Object.keys((await readServers()).servers.echo!.tools ?? {})).toContain('add');
    });
  });

  describe('status, list and toolset', () => {
    // Discovered once for the whole group (each test leaves servers.yaml as it found it).
    let shared: TempDirs;
    beforeAll(async () => {
      shared = await makeTempDirs();
      await mkdir(path.join(shared.root, 'home'));
      await writeServersYaml(shared.configDir, {
        echo: nodeServer(fixture('echo'), { always_on: true }),
        lazy: nodeServer(fixture('echo'), { idle_timeout_minutes: 0.5 }),
      });
      expect((await runCli(shared, ['refresh'])).code).toBe(0);
    });
    afterAll(async () => {
      await shared.cleanup();
    });
    beforeEach(() => {
      dirs = shared;
    });

    it('status shows mode, idle timeout and tool counts in an aligned table', async () => {
      const run = await runCli(dirs, ['status']);
      expect(run.code).toBe(0);
      const [head, echo, lazy] = linesOf(run.stdout);
      expect(head).toMatch(/^server\s+type\s+mode\s+idle\s+sandbox\s+tools\s+disabled\s+stale\s+changed\s+connected$/);
      expect(echo).toMatch(/^echo\s+stdio\s+always-on\s+-\s+no\s+5\s+0\s+0\s+0\s+-$/);
      expect(lazy).toMatch(/^lazy\s+stdio\s+lazy\s+0\.5 min\s+no\s+5\s/);
      expect(head!.indexOf('type')).toBe(echo!.indexOf('stdio'));
      // No blank line for a server with nothing more to say: the table, then one line about the gateway.
      expect(run.stdout.split('\n').slice(3)).toEqual(['No gateway running for this config dir ("connected" shows "-").', '']);
    });

    it('list filters by server and prints JSON', async () => {
      const run = await runCli(dirs, ['list', '--server', 'lazy', '--json']);
      const tools = JSON.parse(run.stdout) as Array<{ id: string }>;
      expect(tools.map((tool) => tool.id)).toEqual(['lazy.echo', 'lazy.add', 'lazy.fail', 'lazy.env', 'lazy.pid']);
    });

    it('creates (flattened names resolved, repeats dropped), shows, equips and deletes toolsets', async () => {
      expect((await runCli(dirs, ['toolset', 'create', 'math', 'echo.add', 'lazy_add', 'echo.add', '--description', 'sums'])).code).toBe(0);
      const shown = JSON.parse((await runCli(dirs, ['toolset', 'show', 'math', '--json'])).stdout) as {
        tools: Array<{ id: string; status: string }>;
      };
      expect(shown.tools).toEqual([
        { id: 'echo.add', status: 'available' },
        { id: 'lazy.add', status: 'available' },
      ]);
      const equip = await runCli(dirs, ['toolset', 'equip', 'math']);
      expect(equip.stdout).toMatch(/next starts/);
      expect(JSON.parse(await readFile(path.join(dirs.dataDir, 'state.json'), 'utf8'))).toMatchObject({ activeToolset: 'math' });
      const listed = JSON.parse((await runCli(dirs, ['toolset', 'list', '--json'])).stdout) as {
        toolsets: Array<{ name: string; remembered: boolean }>;
      };
      expect(listed.toolsets).toEqual([expect.objectContaining({ name: 'math', remembered: true })]);
      const equippedNames = async () => {
        const gateway = await startGateway({ dirs });
        try {
          return (await gateway.client.listTools()).tools.map((tool) => tool.name).filter((name) => !META_TOOL_NAMES.includes(name));
        } finally {
          await gateway.close();
        }
      };
      expect(await equippedNames()).toEqual(['echo_add', 'lazy_add']);
      // unequip undoes equip: the next start has the meta-tools alone, and the toolset stays saved.
      const unequip = await runCli(dirs, ['toolset', 'unequip']);
      expect(unequip.stdout).toMatch(/^'math' will no longer be equipped when "loadout serve" next starts/);
      expect(JSON.parse(await readFile(path.join(dirs.dataDir, 'state.json'), 'utf8'))).toMatchObject({ activeToolset: null });
      expect(await equippedNames()).toEqual([]);
      expect(JSON.parse((await runCli(dirs, ['toolset', 'unequip', '--json'])).stdout)).toEqual({ unequipped: null });
      expect((await runCli(dirs, ['toolset', 'equip', 'math'])).code).toBe(0);
      expect((await runCli(dirs, ['toolset', 'delete', 'math'])).code).toBe(0);
      expect(await readdir(path.join(dirs.configDir, 'toolsets'))).toEqual([]);
      expect(JSON.parse(await readFile(path.join(dirs.dataDir, 'state.json'), 'utf8'))).toMatchObject({ activeToolset: null });
    });

    it.each([
      ['refresh of an unknown server', ['refresh', 'nope'], /Server 'nope' is not in servers\.yaml; configured servers: echo, lazy/],
      ['list of an unknown server', ['list', '--server', 'nope'], /Server 'nope' is not in servers\.yaml/],
      ['a bad toolset name', ['toolset', 'create', '../evil', 'echo.add'], /Invalid toolset name '\.\.\/evil'/],
      ['an unknown tool', ['toolset', 'create', 'x', 'echo.ad'], /'echo\.ad' is not in the catalog \(did you mean echo\.add/],
      ['the reserved name all', ['toolset', 'create', 'all', 'echo.add'], /'all' is reserved/],
      ['a missing argument', ['toolset', 'create'], /missing required argument 'name'/],
      ['a missing toolset', ['toolset', 'show', 'ghost'], /Toolset 'ghost' not found/],
      ['equipping a missing toolset', ['toolset', 'equip', 'ghost'], /Toolset 'ghost' not found/],
      ['deleting a missing toolset', ['toolset', 'delete', 'ghost'], /Toolset 'ghost' not found/],
      ['an unknown option', ['status', '--bogus'], /unknown option '--bogus'/],
      ['an unknown command', ['frobnicate'], /unknown command 'frobnicate'/],
    ])('fails with one readable line for %s, leaving files intact', async (_title, args, message) => {
      const before = await readFile(serversFile(), 'utf8');
      const run = await runCli(dirs, args);
      expect(run.code).not.toBe(0);
      expect(linesOf(run.stderr)).toEqual([expect.stringMatching(/^loadout: /)]);
      expect(run.stderr).toMatch(message);
      expect(await readFile(serversFile(), 'utf8')).toBe(before);
    });

    it('every command has --help', async () => {
      for (const args of [['init'], ['refresh'], ['status'], ['list'], ['toolset'], ['toolset', 'create'], ['toolset', 'equip']]) {
        const run = await runCli(dirs, [...args, '--help']);
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/^Usage: loadout /);
      }
    });
  });

  it('without servers.yaml, doctor, status and search suggest the same first step', async () => {
    const first = 'run "loadout setup <client>" or "loadout init" to import your servers';
    const doctor = await runCli(dirs, ['doctor']);
    expect(doctor.stdout).toContain(first);
    for (const args of [['status'], ['search', 'files']]) {
      const run = await runCli(dirs, args);
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr, args[0]).toContain(first);
    }
  });

  describe('invalid servers.yaml', () => {
    // status reports it on stdout, with what serve runs on meanwhile (unparsedServersFile.test.ts).
    it.each([['list'], ['refresh'], ['toolset', 'show', 'x'], ['toolset', 'create', 'x', 'echo.add']])(
      '%s names file, line and column of invalid YAML and leaves it alone',
      async (...args) => {
        const broken = 'servers:\n  echo:\n    command: [unclosed\n';
        await writeFile(serversFile(), broken);
        await mkdir(path.join(dirs.configDir, 'toolsets'), { recursive: true });
        await writeFile(path.join(dirs.configDir, 'toolsets', 'x.yaml'), 'name: x\ntools: [echo.add]\n');
        const run = await runCli(dirs, args);
        expect(run.code).not.toBe(0);
        expect(linesOf(run.stderr)).toEqual([expect.stringMatching(/^loadout: .*servers\.yaml:\d+:\d+: /)]);
        expect(await readFile(serversFile(), 'utf8')).toBe(broken);
      },
    );
  });
});
