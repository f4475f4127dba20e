// run-code end to end, over real stdio and HTTP against the built loadout with real npm servers
// behind it: a script's calls go through the call pipeline (each one in the audit trail, a
// policy-hidden tool "no such tool" for the script too), only its answer comes back, and the
// sandbox holds: no host objects, an endless loop and a runaway allocation end as errors, and the
// next run starts fresh.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { THIRD_PARTY, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { connectHttp, connectModernClient, startHttpGateway } from '../helpers/http.js';

const FILES = 20;

interface AuditLine {
  action: string;
  server?: string;
  tool?: string;
  exposed_tool?: string;
  outcome: string;
}

async function writeConfig(configDir: string, workspace: string, extra: Record<string, unknown> = {}): Promise<void> {
  const servers = {
    filesystem: nodeServer(THIRD_PARTY.filesystem, { args: [THIRD_PARTY.filesystem, workspace] }),
    memory: nodeServer(THIRD_PARTY.memory),
  };
  await writeFile(path.join(configDir, 'servers.yaml'), stringify({ servers, ...extra }));
}

// The files, each with its own number of words.
async function writeWorkspace(root: string): Promise<{ workspace: string; counts: Record<string, number> }> {
  const workspace = path.join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  const counts: Record<string, number> = {};
  for (let index = 0; index < FILES; index++) {
    const name = `note-${String(index).padStart(2, '0')}.txt`;
    const words = Array.from({ length: 50 + index * 7 }, (_, word) => `word${word}`);
    await writeFile(path.join(workspace, name), `${words.join(' ')}\n`);
    counts[name] = words.length;
  }
  return { workspace, counts };
}

const runCode = (code: string, timeout_ms?: number) => ({ name: 'run-code', arguments: { code, ...(timeout_ms ? { timeout_ms } : {}) } });

const WORD_COUNTS = `
  const listing = await callTool("filesystem.list_directory", { path: WORKSPACE });
  const names = listing.content[0].text.split("\\n").filter((line) => line.startsWith("[FILE]")).map((line) => line.slice(7));
  const counts = {};
  for (const name of names) {
    const file = await callTool("filesystem.read_text_file", { path: WORKSPACE + "/" + name });
    counts[name] = file.content[0].text.split(/\\s+/).filter(Boolean).length;
  }
  console.log("read", names.length, "files");
  return counts;`;

describe('run-code', () => {
  const sandbox = useGatewaySandbox();

  it('counts the words of 20 files through the call pipeline: right counts, a small answer, 20 calls in the audit trail, a hidden tool unknown', async () => {
    const { workspace, counts } = await writeWorkspace(sandbox.dirs.root);
    const policy = { local: { subject: 'dev', groups: ['eng'] }, rules: [{ groups: ['eng'], servers: ['filesystem'] }] };
    await writeConfig(sandbox.dirs.configDir, workspace, { policy });
    const gateway = await sandbox.start();
    const code = `const WORKSPACE = ${JSON.stringify(workspace)};${WORD_COUNTS}`;
    const answer = await gateway.client.callTool(runCode(code));
    expect(answer.isError, textOf(answer)).toBeFalsy();
    expect(JSON.parse(textOf(answer).split('\n')[0]!)).toEqual(counts);
    expect(answer.content[1]).toEqual({ type: 'text', text: 'console.log (1 line):\nread 20 files' });
    // The files hold ~10 KB of words; the model sees their counts only.
    expect(JSON.stringify(answer.content).length).toBeLessThan(800);

    // The policy grants filesystem only: memory's tools do not exist for the script either.
    const denied = await gateway.client.callTool(
      runCode('const r = await callTool("memory.read_graph", {}); return { isError: r.isError, text: r.content[0].text };'),
    );
    const seen = JSON.parse(textOf(denied)) as { isError: boolean; text: string };
    expect(seen.isError).toBe(true);
    expect(seen.text).toMatch(/^No tool 'memory\.read_graph' in the catalog/);
    await gateway.close();

    const run = await runCli(sandbox.dirs, ['audit', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const records = (JSON.parse(run.stdout) as { records: AuditLine[] }).records;
    const calls = records.filter((record) => record.action === 'tool-call');
    expect(calls.filter((record) => record.tool === 'read_text_file' && record.outcome === 'ok')).toHaveLength(FILES);
    expect(calls).toContainEqual(
      expect.objectContaining({ server: 'filesystem', tool: 'list_directory', exposed_tool: 'filesystem.list_directory' }),
    );
    expect(calls).toContainEqual(expect.objectContaining({ exposed_tool: 'memory.read_graph', outcome: 'denied-policy' }));
    expect(records.filter((record) => record.exposed_tool === 'run-code').map((record) => record.outcome)).toEqual(['ok', 'ok']);
  });

  it('reaches nothing but its three functions, ends a loop and a runaway allocation as errors, and starts each run fresh', async () => {
    const { workspace } = await writeWorkspace(sandbox.dirs.root);
    await writeConfig(sandbox.dirs.configDir, workspace, {
      limits: { server_calls_per_minute: 3 },
      gateway: { code_mode: { max_calls: 5 } },
    });
    const { client } = await sandbox.start();
    const call = async (code: string, timeout?: number) => await client.callTool(runCode(code, timeout));

    const globals = await call(
      'return [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof WebAssembly, typeof __loadoutHost];',
    );
    expect(JSON.parse(textOf(globals))).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
    const imported = await call('return await import("node:fs").then(() => "loaded", (error) => "refused: " + error.message);');
    expect(textOf(imported)).toMatch(/^"refused: /);

    const started = performance.now();
    const loop = await call('while (true) {}', 2000);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(loop.isError).toBe(true);
    expect(textOf(loop)).toContain('time limit of 2000 ms');

    const allocation = await call('const big = new Uint8Array(1024 * 1024 * 1024); return big.length;');
    expect(allocation.isError).toBe(true);
    expect(textOf(allocation)).toContain('out of memory (limit 64 MB)');

    // Nothing of a run is left for the next: a global set by one is gone in the next.
    expect((await call('globalThis.left = 1; return typeof left;')).content[0]).toEqual({ type: 'text', text: '"number"' });
    expect(textOf(await call('return typeof left;'))).toBe('"undefined"');
    expect(textOf(await call('return 6 * 7;'))).toBe('42');

    // Each call counts against the caller's rate limits, as a call-tool call does; past max_calls none is made.
    const limited = await call(`
      const outcomes = [];
      for (let i = 0; i < 6; i++) {
        try { await callTool("filesystem.list_allowed_directories", {}); outcomes.push("ok"); } catch (error) { outcomes.push(error.message); }
      }
      return outcomes;`);
    const outcomes = JSON.parse(textOf(limited)) as string[];
    expect(outcomes.slice(0, 3)).toEqual(['ok', 'ok', 'ok']);
    for (const refused of outcomes.slice(3, 5)) expect(refused).toMatch(/at most 3 calls of server 'filesystem' a minute for each caller/);
    expect(outcomes[5]).toBe('call limit reached: a run makes at most 5 calls');

    const thrown = await call('throw new TypeError("bad input");');
    expect(thrown.isError).toBe(true);
    expect(textOf(thrown)).toContain('TypeError: bad input');
    const long = await call('return "y".repeat(50000);');
    expect(textOf(long)).toMatch(/… \[cut: 50002 bytes, over run-code's limit of 20000/);
    expect(Buffer.byteLength(textOf(long))).toBeLessThanOrEqual(20_000);
  });

  it('ends a run at its deadline while it waits on a call, and the next run works', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { slow: nodeServer(fixture('slow')) });
    const { client } = await sandbox.start();
    const started = performance.now();
    const waited = await client.callTool(runCode('return await callTool("slow.sleep", { ms: 60000 });', 1500));
    expect(performance.now() - started).toBeLessThan(3000);
    expect(waited.isError).toBe(true);
    expect(textOf(waited)).toBe(
      'run-code stopped: the script ran past its time limit of 1500 ms (after 1 call). Nothing of this run is kept; a new run starts fresh.',
    );
    expect(textOf(await client.callTool(runCode('return (await callTool("slow.sleep", { ms: 10 })).content[0].text;')))).toBe(
      '"slept 10 ms"',
    );
  });

  it('searches as data and gives TypeScript signatures for the calls, in both eras over stdio and HTTP', async () => {
    const { workspace, counts } = await writeWorkspace(sandbox.dirs.root);
    await writeConfig(sandbox.dirs.configDir, workspace);
    const searchScript = `
      const found = await search("read a text file", { server: "filesystem", limit: 3 });
      const reader = found.find((tool) => tool.tool === "filesystem.read_text_file");
      const file = await callTool(reader.tool, { path: ${JSON.stringify(path.join(workspace, 'note-03.txt'))} });
      return { found: found.length, schema: Object.keys(reader.inputSchema.properties), words: file.content[0].text.split(/\\s+/).filter(Boolean).length };`;
    const expected = { found: 3, schema: ['path', 'tail', 'head'], words: counts['note-03.txt'] };

    const stdio = await sandbox.start({ versionNegotiation: { mode: 'auto' } });
    expect(JSON.parse(textOf(await stdio.client.callTool(runCode(searchScript))))).toEqual(expected);
    const signatures = textOf(
      await stdio.client.callTool({
        name: 'discover-all-tools',
        arguments: { query: 'read a text file', server: 'filesystem', limit: 2, types: true },
      }),
    );
    expect(signatures).toContain(
      'declare function callTool(name: "filesystem.read_text_file", args: { path: string; tail?: number; head?: number }): Promise<ToolResult<{ content: string }>>;',
    );
    await stdio.close();

    const http = await startHttpGateway(sandbox.dirs);
    try {
      const legacy = await connectHttp(http.url);
      expect(JSON.parse(textOf(await legacy.client.callTool(runCode(searchScript))))).toEqual(expected);
      await legacy.close();
      const modern = await connectModernClient(http.url);
      expect(JSON.parse(textOf(await modern.callTool(runCode(searchScript))))).toEqual(expected);
      await modern.close();
    } finally {
      await http.close();
    }
  });
});
