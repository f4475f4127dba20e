// A server that declares prompts and resources but fails those lists, as real servers do (a list
// declared but never written answers -32601; a database that is down gives -32603): its tools are
// still discovered and callable, the failed list is named once in status, doctor and --json, and
// listed again later. A failing tools/list fails discovery with a message that says it started.
// Entries pass through loadout (warm start, from the cache) byte for byte, key order included.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linesOf, runCli } from '../helpers/cli.js';
import { eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { startRawSession, startRawGateway, type RawGateway } from '../helpers/rawStdio.js';

type Mode = 'ok' | 'templates-unimplemented' | 'resources-unimplemented' | 'database-down' | 'tools-down';
type Finding = { subject: string; ok: boolean; message: string; fix?: string };
type StatusServer = { name: string; listFailures: Record<string, { text: string; rpcCode?: number }> };

const UNIMPLEMENTED = 'Method not found (-32601)';
const DOWN = 'connect ECONNREFUSED 127.0.0.1:5432 (the database is down)';
// A failed list names the server's JSON-RPC code after its words.
const DOWN_ANSWER = `${DOWN} (-32603)`;

describe('optional lists that fail', () => {
  const sandbox = useGatewaySandbox();
  const modeFile = () => path.join(sandbox.dirs.root, 'mode');
  const setMode = (mode: Mode) => writeFile(modeFile(), mode);
  const configure = async (mode: Mode) => {
    await setMode(mode);
    await writeServersYaml(sandbox.dirs.configDir, {
      db: nodeServer(fixture('partialLists'), { args: [fixture('partialLists'), modeFile()] }),
    });
  };
  const cli = (...args: string[]) => runCli(sandbox.dirs, args);
  const cached = async () =>
    (
      JSON.parse(await readFile(path.join(sandbox.dirs.dataDir, 'catalog.json'), 'utf8')) as {
        servers: Record<string, Record<string, unknown>>;
      }
    ).servers.db;
  const statusOf = async () => (JSON.parse((await cli('status', '--json')).stdout) as { servers: StatusServer[] }).servers[0]!;

  const unimplemented = (method: string) => ({ text: `${method} failed: ${UNIMPLEMENTED}`, rpcCode: -32601 });
  const down = (method: string) => ({ text: `${method} failed: ${DOWN_ANSWER}`, rpcCode: -32603 });
  it.each([
    ['templates-unimplemented', { resourceTemplates: unimplemented('resources/templates/list') }],
    ['resources-unimplemented', { resources: unimplemented('resources/list') }],
    [
      'database-down',
      { prompts: down('prompts/list'), resources: down('resources/list'), resourceTemplates: down('resources/templates/list') },
    ],
  ] as const)('%s: refresh keeps the tools, status and doctor name the failed list once, the tool is called', async (mode, failures) => {
    await configure(mode);
    const refresh = await cli('refresh');
    expect(refresh.code, refresh.stderr).toBe(0);
    expect(refresh.stdout).toMatch(/^│? *db *│? *ok *│? *1 /m);
    expect((await statusOf()).listFailures).toEqual(failures);
    const doctor = await cli('doctor', '--json');
    expect(doctor.code).toBe(1);
    const findings = (JSON.parse(doctor.stdout) as { findings: Finding[] }).findings.filter((finding) => finding.subject === 'server db');
    expect(findings[0]).toMatchObject({ ok: true, message: expect.stringMatching(/^starts, 1 tool listed/) });
    const labels = { prompts: 'prompts', resources: 'resources', resourceTemplates: 'resource templates' };
    expect(findings.slice(1).map((finding) => finding.message)).toEqual(
      Object.entries(failures).map(
        ([list, failure]) => `${failure.text}; its tools work, its ${labels[list as keyof typeof labels]} are not offered`,
      ),
    );
    expect(findings.slice(1).every((finding) => !finding.ok && finding.fix)).toBe(true);
    expect(new Set(findings.slice(1).map((finding) => finding.fix))).toEqual(
      new Set([
        mode === 'database-down'
          ? 'check the server (its own log, what it depends on), then run loadout refresh db'
          : 'none in loadout: the server declares a list it does not serve (report it to its authors)',
      ]),
    );

    // refresh and status say it as doctor does: what is missing, then the fix, each list once.
    const said = findings.slice(1).map((finding) => `db: ${finding.message} — fix: ${finding.fix}`);
    const status = await cli('status');
    for (const line of said) {
      expect(linesOf(refresh.stdout)).toContain(line);
      expect(linesOf(status.stdout).filter((each) => each === line)).toHaveLength(1);
    }
    for (const failure of Object.values(failures))
      expect(linesOf(status.stdout).filter((line) => line.includes(failure.text))).toHaveLength(1);

    const gateway = await sandbox.start();
    const result = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'db.query', arguments: { sql: 'select 1' } } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('rows for select 1');
  });

  it('keeps what a list cached before when it fails, and clears the failure once it answers again', async () => {
    await configure('ok');
    expect((await cli('refresh')).code).toBe(0);
    await setMode('database-down');
    expect((await cli('refresh')).code).toBe(0);
    expect(Object.keys((await statusOf()).listFailures)).toEqual(['prompts', 'resources', 'resourceTemplates']);
    expect(await cached()).toMatchObject({ prompts: [{ name: 'describe' }], resources: [{ uri: 'db://schema' }] });

    // A running gateway lists again when the server next starts (here: for a call).
    await setMode('ok');
    const gateway = await sandbox.start();
    await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'db.query', arguments: { sql: 'select 1' } } });
    await eventually(async () => (await cached())?.listFailures === undefined, 10_000, 'the failures to clear');
    expect((await statusOf()).listFailures).toEqual({});
  });

  it('does not warn again on each client list about a list the catalog already records as failing', async () => {
    await configure('templates-unimplemented');
    expect((await cli('refresh')).code).toBe(0);
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    // Started by a call, so each templates list goes to the running server and fails there.
    await gateway.client.callTool({ name: 'db_query', arguments: { sql: 'select 1' } });
    for (let round = 0; round < 3; round++) expect((await gateway.client.listResourceTemplates()).resourceTemplates).toEqual([]);
    await gateway.client.listResources();
    expect(gateway.stderr()).not.toContain('resources/templates/list failed; answering from the cache');
  });

  it('a failing tools/list fails discovery with a message that says the server started', async () => {
    await configure('tools-down');
    const refresh = await cli('refresh');
    expect(refresh.code).toBe(1);
    expect(refresh.stderr).toContain(`Server 'db' started, but its tools/list failed (${DOWN})`);
    expect(refresh.stderr).not.toMatch(/failed to start|could not be started/);

    const doctor = await cli('doctor', '--json');
    const finding = (JSON.parse(doctor.stdout) as { findings: Finding[] }).findings.find((each) => each.subject === 'server db');
    expect(finding).toMatchObject({ ok: false, message: `starts, but its tools/list failed: ${DOWN}` });

    const gateway = await sandbox.start();
    const result = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'db.query', arguments: {} } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`Server 'db' started, but its tools/list failed (${DOWN})`);
    expect(textOf(result)).not.toContain('could not be started');
  });

  it('passes templates, resources and prompts from the cache exactly as the server sent them', async () => {
    await configure('ok');
    expect((await cli('refresh')).code).toBe(0);
    const direct = await startRawSession([fixture('partialLists'), modeFile()]);
    const warm = await startRawGateway(sandbox.dirs, ['--equip', 'all']);
    try {
      const [sent, through] = await Promise.all([listsOf(direct), listsOf(warm)]);
      expect(through.resourceTemplates).toEqual(sent.resourceTemplates);
      expect(through.resources).toEqual(sent.resources);
      // Prompts are exposed under flattened names; the name keeps its place.
      expect(through.prompts).toEqual(sent.prompts.map((prompt) => prompt.replace('"name":"describe"', '"name":"db_describe"')));
    } finally {
      await Promise.all([direct.close(), warm.close()]);
    }
  });
});

// Each entry of each list, as JSON text: key order shows.
async function listsOf(session: RawGateway): Promise<Record<'prompts' | 'resources' | 'resourceTemplates', string[]>> {
  const requests = { prompts: 'prompts/list', resources: 'resources/list', resourceTemplates: 'resources/templates/list' } as const;
  const lists = await Promise.all(
    Object.entries(requests).map(async ([key, method]) => {
      session.send({ jsonrpc: '2.0', id: key, method, params: {} });
      const answer = await session.answer(key);
      return [key, ((answer.result?.[key] as unknown[]) ?? []).map((entry) => JSON.stringify(entry))] as const;
    }),
  );
  return Object.fromEntries(lists) as Record<'prompts' | 'resources' | 'resourceTemplates', string[]>;
}
