// Search end to end: discover-all-tools with a query over real stdio (top 10, compact lines with
// parameters, the weak-match notice, bad arguments) and `loadout search` on the command line.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { linesOf, mutableServer, runCli } from '../helpers/cli.js';
import { startHttpGateway } from '../helpers/http.js';
import {
  eventually,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  useGatewaySandbox,
  writeServersYaml,
  type TempDirs,
} from '../helpers/gateway.js';

// Twelve tools so the default page (10) is visibly shorter than the catalog.
const NOTE_TOOLS = Array.from({ length: 12 }, (_, index) => ({
  name: `note_${index}`,
  description: `Keep note number ${index} in the notebook. Second sentence.`,
}));

describe('discover-all-tools with a query', () => {
  const sandbox = useGatewaySandbox();

  it('returns the top 10 as one compact line each: server.tool — first sentence (params: a, b?)', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      notes: await mutableServer(sandbox.dirs.root, 'notes', NOTE_TOOLS),
    });
    const gateway = await sandbox.start();
    const text = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'keep a note in the notebook' } }));
    const toolLines = linesOf(text).filter((line) => / — /.test(line));
    expect(toolLines).toHaveLength(10);
    expect(toolLines[0]).toMatch(/^notes\.note_\d+ — Keep note number \d+ in the notebook\.$/);
    // The header does not claim every tool that shares a word "matches".
    expect(linesOf(text)[0]).toBe('Best matches for "keep a note in the notebook" (showing 1–10).');
    expect(text).toMatch(/More: offset=10\./);
    expect(text).not.toMatch(/No tool matches this strongly/);

    const echo = textOf(
      await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo the text back unchanged' } }),
    );
    expect(linesOf(echo)[1]).toBe('echo.echo — Return the given text unchanged. (params: text)');
    const add = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'sum of two numbers' } }));
    expect(add).toContain('echo.add — Add two numbers and return the sum as structured content. (params: a, b)');
  });

  it('says so when nothing matches strongly and points at listing a server', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const gateway = await sandbox.start();
    const text = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'book a flight to Lisbon' } }));
    expect(text).toMatch(
      /No tool matches this strongly; these are the closest\. To browse instead, list one server's tools: discover-all-tools \{"server": "NAME"\} \(servers: echo\)/,
    );
  });

  it('with no server discovered, says how many are not and names loadout refresh instead of "no match"', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { missing: { command: 'no-such-mcp-server' } });
    const gateway = await sandbox.start();
    const text = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'read a file' } }));
    expect(text).not.toMatch(/No tool matches/);
    expect(linesOf(text)[0]).toBe(
      'No tools yet: 1 of 1 server is not discovered (see the ! line below). The user can run "loadout refresh" in a terminal to discover it and see why it fails.',
    );
    // Each server is named once: on its own line, with why and when loadout tries it again.
    expect(linesOf(text)[1]).toMatch(/^! missing: not discovered: failed at /);
    expect(linesOf(text)[0]).not.toContain('missing');
  });

  it('answers bad arguments clearly: limit 0, limit 10000, a 10 KB query, another script', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const gateway = await sandbox.start();
    const call = async (args: Record<string, unknown>) => gateway.client.callTool({ name: 'discover-all-tools', arguments: args });
    for (const [args, message] of [
      [{ query: 'echo', limit: 0 }, /limit: .*>=1/],
      [{ query: 'echo', limit: 10_000 }, /limit: .*<=500/],
      [{ query: 'echo '.repeat(2048) }, /query: .*<=500 characters/],
    ] as const) {
      const result = await call(args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    const other = await call({ query: 'テキストをそのまま返す' });
    expect(other.isError).toBeFalsy();
    expect(textOf(other)).toMatch(/^No tool matches "/);
  });
});

describe('the map of the catalog', () => {
  const sandbox = useGatewaySandbox();
  const tools = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => ({ name: `${prefix}_${index}`, description: `The ${prefix} number ${index}.` }));

  it('names every server with what it is for and its tool count, in the instructions of the next start and as discover-all-tools {}', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      crm: await mutableServer(sandbox.dirs.root, 'crm', tools('get_contact', 30), { description: 'Customer contacts and deals. More.' }),
      notes: await mutableServer(sandbox.dirs.root, 'notes', tools('note', 25), {
        instructions: 'This server provides a notebook for ideas.',
      }),
      broken: { command: path.join(sandbox.dirs.root, 'no-such-command') },
    });
    const first = await sandbox.start();
    const map = textOf(await first.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(linesOf(map)).toEqual([
      '3 servers, 55 tools. Search them: discover-all-tools {"query": "what you want to do"}; list one server\'s: {"server": "NAME"}.',
      'crm (30 tools): Customer contacts and deals',
      'notes (25 tools): a notebook for ideas',
      expect.stringMatching(/^broken: not discovered \(.+\)$/),
    ]);
    // The first start had nothing discovered yet; the next one names the servers before reading the catalog.
    expect(first.client.getInstructions()).toMatch(
      /^loadout fronts many MCP servers\. .*\nServers \(tools: what for\):\ncrm: not discovered yet\n/s,
    );
    await first.close();
    const second = await sandbox.start();
    expect(second.client.getInstructions()).toContain(
      '\ncrm (30 tools): Customer contacts and deals\nnotes (25 tools): a notebook for ideas\nbroken: not discovered yet',
    );
    // A page asked for still lists tools.
    expect(textOf(await second.client.callTool({ name: 'discover-all-tools', arguments: { limit: 2 } }))).toMatch(
      /^55 tools \(showing 1–2\)/,
    );
  });
});

describe('tools of two servers with the same description', () => {
  const sandbox = useGatewaySandbox();

  it('say on each line which server it is and what that server is for', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      fs: await mutableServer(sandbox.dirs.root, 'fs', [
        { name: 'move_file', description: 'Move or rename a file.' },
        { name: 'read_directory', description: 'List a directory.' },
      ]),
      desk: await mutableServer(
        sandbox.dirs.root,
        'desk',
        [
          { name: 'move_file', description: 'Move or rename a file.' },
          { name: 'start_process', description: 'Run a command.' },
        ],
        { description: 'Terminal commands and files on the desktop' },
      ),
    });
    const gateway = await sandbox.start();
    const text = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'move a file' } }));
    expect(text).toContain('fs.move_file — Move or rename a file. [same text as on 1 other server; fs is for directory, file]');
    expect(text).toContain(
      'desk.move_file — Move or rename a file. [same text as on 1 other server; desk is for Terminal commands and files on the desktop]',
    );
  });
});

describe('learning from use', () => {
  const sandbox = useGatewaySandbox();
  const NOTES = [
    { name: 'archive_note', description: 'Move a note to the archive.' },
    { name: 'delete_note', description: 'Delete a note.' },
    { name: 'store_item', description: 'Keep an item in the store.' },
  ];

  it('a query followed by an equip makes the same query rank that tool first, in a new session too', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { notes: await mutableServer(sandbox.dirs.root, 'notes', NOTES) });
    const query = { query: 'zebra protocol for the quarterly memo' };
    const first = await sandbox.start();
    const before = textOf(await first.client.callTool({ name: 'discover-all-tools', arguments: query }));
    expect(linesOf(before)[1]).not.toMatch(/^notes\.archive_note/);
    const built = await first.client.callTool({
      name: 'build-toolset',
      arguments: { name: 'memo', tools: ['notes.archive_note'], equip: true },
    });
    expect(built.isError).toBeFalsy();
    expect(linesOf(textOf(await first.client.callTool({ name: 'discover-all-tools', arguments: query })))[1]).toMatch(
      /^\* notes\.archive_note — /,
    );
    await first.close();

    const second = await sandbox.start();
    const after = textOf(await second.client.callTool({ name: 'discover-all-tools', arguments: query }));
    expect(linesOf(after)[1]).toMatch(/^(\* )?notes\.archive_note — Move a note to the archive\./);
  });

  it('counts a call of an equipped tool the answer showed as the outcome of the query', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { notes: await mutableServer(sandbox.dirs.root, 'notes', NOTES) });
    const query = { query: 'tidy away the zebra note' };
    const first = await sandbox.start({ args: ['--equip', 'all'] });
    const before = textOf(await first.client.callTool({ name: 'discover-all-tools', arguments: query }));
    expect(before).toContain('notes.archive_note');
    expect(linesOf(before)[1]).not.toMatch(/notes\.archive_note/);
    const exposed = (await first.client.listTools()).tools.map((tool) => tool.name).find((name) => name.endsWith('archive_note'));
    expect(textOf(await first.client.callTool({ name: exposed!, arguments: {} }))).toBe('archive_note');
    // The call is answered first; the lesson is written beside it.
    const learned = path.join(sandbox.dirs.dataDir, 'learned-words.json');
    await eventually(
      async () => (await readFile(learned, 'utf8').catch(() => '')).includes('"notes.archive_note"'),
      10_000,
      'the call to be learned',
    );
    await first.close();

    const second = await sandbox.start();
    const after = textOf(await second.client.callTool({ name: 'discover-all-tools', arguments: query }));
    expect(linesOf(after)[1]).toMatch(/^(\* )?notes\.archive_note — /);
  });

  it('learns from a 2026-07-28 HTTP client, whose query and equip are separate requests of one principal', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { notes: await mutableServer(sandbox.dirs.root, 'notes', NOTES) });
    const http = await startHttpGateway(sandbox.dirs);
    const client = new Client({ name: 'modern', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      expect(client.getProtocolEra()).toBe('modern');
      await client.callTool({ name: 'discover-all-tools', arguments: { query: 'zebra protocol for the quarterly memo' } });
      await client.callTool({ name: 'build-toolset', arguments: { name: 'memo', tools: ['notes.archive_note'], equip: true } });
      const learned = path.join(sandbox.dirs.dataDir, 'learned-words.json');
      await eventually(
        async () => (await readFile(learned, 'utf8').catch(() => '')).includes('"notes.archive_note"'),
        10_000,
        'the equip to be learned',
      );
    } finally {
      await client.close();
      await http.close();
    }
  });

  it('learns nothing from a query that led nowhere, or from equipping everything', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { notes: await mutableServer(sandbox.dirs.root, 'notes', NOTES) });
    const gateway = await sandbox.start();
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'zebra protocol' } });
    await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'unicorn ledger' } });
    const text = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'zebra protocol' } }));
    expect(text).toMatch(/^No tool matches "/);
  });
});

describe('loadout search', () => {
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    // Warm the definition cache the way a user does: one serve (discovery) ended cleanly.
    const gateway = await startGateway({ dirs });
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    await gateway.close();
  });
  afterEach(async () => {
    await dirs.cleanup();
  });

  it('prints the ranking, and with --explain the fields and words behind each score', async () => {
    const run = await runCli(dirs, ['search', 'sum two numbers', '--explain']);
    expect(run.code).toBe(0);
    const lines = linesOf(run.stdout);
    expect(lines[0]).toMatch(/^ {2}1\. echo\.add — Add two numbers/);
    expect(run.stdout).toMatch(/word matches: rank 1, BM25F [\d.]+ — sum \(description\); .*number \(description\)/);
    expect(run.stdout).toMatch(/meaning: rank \d+, alignment [\d.]+ — sum≈sum 1/);
    expect(run.stdout).not.toMatch(/server named/);
    const named = await runCli(dirs, ['search', 'echo: sum two numbers', '--explain']);
    expect(linesOf(named.stdout)[0]).toMatch(/^ {2}1\. echo\.add — /);
    expect(named.stdout).toMatch(/server named in the query: rank 1 among its tools/);
  });

  it('keeps its index in the data dir: the next run and a warm gateway read it, a damaged one is rebuilt', async () => {
    const indexFile = path.join(dirs.dataDir, 'search-index.bin');
    const ranked = async () => {
      const run = await runCli(dirs, ['search', 'sum two numbers', '--json']);
      expect(run.code).toBe(0);
      return (JSON.parse(run.stdout) as { tools: Array<{ tool: string; score: number }> }).tools;
    };
    const first = await ranked();
    expect(first[0]!.tool).toBe('echo.add');
    const saved = await readFile(indexFile);
    expect(saved.toString('ascii', 0, 4)).toBe('LDSI');
    // Written by renaming a new file over it: the same inode means it was read, not written again.
    const { ino } = await stat(indexFile);
    expect(await ranked()).toEqual(first);
    const gateway = await startGateway({ dirs });
    const text = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query: 'sum two numbers' } }));
    expect(linesOf(text)[1]).toMatch(/^echo\.add — /);
    await gateway.close();
    expect((await stat(indexFile)).ino).toBe(ino);

    await writeFile(indexFile, Buffer.concat([saved.subarray(0, saved.length - 16), Buffer.alloc(16, 7)]));
    expect(await ranked()).toEqual(first);
    expect((await readFile(indexFile)).equals(saved)).toBe(true);
  });

  it('--json gives the ranking with its reasons', async () => {
    const run = await runCli(dirs, ['search', 'process id', '--json', '--explain', '--limit', '2']);
    const parsed = JSON.parse(run.stdout) as { strong: boolean; vectors: boolean; tools: Array<{ tool: string; lexical?: unknown }> };
    expect(parsed.tools[0]!.tool).toBe('echo.pid');
    expect(parsed.tools).toHaveLength(2);
    expect(parsed).toMatchObject({ strong: true, vectors: true });
    expect(parsed.tools[0]!.lexical).toBeDefined();
  });

  it('enrich has the model backend write example requests, searched as a field; a rerun resumes', async () => {
    // The fake model: for echo.pid it writes a request in words no tool has; for echo.fail it
    // fails (exit 1) until the marker file exists; for the rest, plain requests.
    const model = path.join(dirs.root, 'model.mjs');
    const marker = path.join(dirs.root, 'fail-fixed');
    await writeFile(
      model,
      `import { existsSync } from 'node:fs';
       const prompt = process.argv[2];
       if (prompt.includes('echo.fail') && !existsSync(${JSON.stringify(marker)})) process.exit(1);
       console.log(JSON.stringify(prompt.includes('echo.pid') ? ['which quagga answers me'] : ['do the usual thing']));`,
    );
    await writeServersYaml(
      dirs.configDir,
      { echo: nodeServer(fixture('echo')) },
      { optimization: { backend: 'command', command: [process.execPath, model, '{prompt}'] } },
    );
    expect((JSON.parse((await runCli(dirs, ['search', 'quagga', '--json'])).stdout) as { tools: unknown[] }).tools).toEqual([]);

    const first = await runCli(dirs, ['enrich']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Wrote example requests for 4 of 5 tools \(0 already done, 1 failed: run again to retry\)/);
    expect(first.stderr).toMatch(/echo\.fail: /);
    const ranked = JSON.parse((await runCli(dirs, ['search', 'quagga', '--json'])).stdout) as { tools: Array<{ tool: string }> };
    expect(ranked.tools[0]!.tool).toBe('echo.pid');

    await writeFile(marker, '');
    expect((await runCli(dirs, ['enrich'])).stdout).toMatch(/Wrote example requests for 1 of 1 tools \(4 already done\)/);
    expect((await runCli(dirs, ['enrich'])).stdout).toMatch(/All 5 tools already have example requests\./);
    expect(JSON.parse((await runCli(dirs, ['enrich', '--json'])).stdout)).toEqual({ tools: 5, alreadyDone: 5, written: 0, failed: 0 });
  });

  it('takes a blank query as no query, as discover-all-tools does: the tools in catalog order', async () => {
    const gateway = await startGateway({ dirs });
    try {
      const discover = async (args: Record<string, unknown>) =>
        textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: args }));
      expect(await discover({ query: ' ', server: 'echo' })).toBe(await discover({ server: 'echo' }));
      expect(await discover({ query: '' })).toBe(await discover({}));
      const order = linesOf(await discover({ server: 'echo' }))
        .slice(1, -1)
        .map((line) => line.split(' — ')[0]);
      const run = await runCli(dirs, ['search', '  ', '--limit', '3']);
      expect(run.code).toBe(0);
      const listed = linesOf(run.stdout);
      expect(listed[0]).toBe('No query: 5 tools in catalog order; words rank them, e.g. loadout search "read a file"');
      expect(listed.slice(1).map((line) => line.trim().split(' — ')[0])).toEqual(
        order.slice(0, 3).map((id, index) => `${index + 1}. ${id}`),
      );
    } finally {
      await gateway.close();
    }
  });

  it('refuses a bad limit with one line and exit 1', async () => {
    for (const [args, message] of [
      [['search', 'echo', '--limit', '0'], /^loadout: --limit must be a whole number from 1 to 500, got '0'/],
      [['search', 'echo', '--limit', '10000'], /^loadout: --limit must be a whole number from 1 to 500/],
    ] as const) {
      const run = await runCli(dirs, [...args]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(message);
    }
  });
});
