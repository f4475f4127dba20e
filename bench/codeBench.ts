// `npm run bench:code`: three multi-step tasks over real npm servers (server-filesystem on a temp
// workspace, server-memory on a temp file), each done twice through one loadout: by equip-and-call
// (equip the tools, call them one by one, every result read by the model, here by the bench
// standing in for it) and by one run-code script that returns only the answer. It compares the
// bytes of tool results the model would read, its turns (one per round of calls that depend on
// the round before, parallel calls counted once, plus the answer), wall time of the calls, and
// the answers themselves, which must be identical.
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { stringify } from 'yaml';
import { ROOT } from './catalogFixture.js';
import { spawnLoadout } from './processes.js';
import { formatBytes, formatMs } from './stats.js';

const FILESYSTEM = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const MEMORY = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const FILES = 20;
const ENTITIES = 40;
const GOAL = 0.8;

/** One way of doing a task: what the model read, how many turns it took, how long the calls took, and the answer. */
interface Run {
  resultBytes: number;
  turns: number;
  wallMs: number;
  answer: unknown;
}

/** A task, done both ways against the same servers. */
interface Task {
  name: string;
  /** Before both ways: the state the task starts from (memory's graph, filled once and read by both). */
  prepare?(client: Client): Promise<void>;
  byCalls(call: Caller): Promise<unknown>;
  script: string;
}

/** Calls a tool through loadout and counts what its result costs the model; `round` marks calls that wait on the one before. */
class Caller {
  resultBytes = 0;
  rounds = 0;
  constructor(readonly client: Client) {}

  async round<T>(calls: () => Promise<T>): Promise<T> {
    this.rounds++;
    return calls();
  }

  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const result = await this.client.callTool({ name, arguments: args });
    this.resultBytes += Buffer.byteLength(JSON.stringify(result.content));
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result;
  }
}

const textOf = (result: CallToolResult): string => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
const fileNames = (listing: string): string[] =>
  listing
    .split('\n')
    .filter((line) => line.startsWith('[FILE]'))
    .map((line) => line.slice('[FILE] '.length))
    .sort();
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

// Both file tasks: list the workspace (one round), then call `tool` on every file (a second round, in parallel).
async function eachFile(caller: Caller, workspace: string, tool: string): Promise<{ names: string[]; texts: string[] }> {
  const names = await caller.round(async () => fileNames(textOf(await caller.call('filesystem_list_directory', { path: workspace }))));
  const texts = await caller.round(() =>
    Promise.all(names.map(async (name) => textOf(await caller.call(tool, { path: path.join(workspace, name) })))),
  );
  return { names, texts };
}

// The same two rounds in a script: `texts` holds each file's result of `tool`.
function eachFileScript(at: string, tool: string): string {
  return `
        const listing = await callTool("filesystem.list_directory", { path: ${at} });
        const names = listing.content[0].text.split("\\n").filter((line) => line.startsWith("[FILE]")).map((line) => line.slice(7)).sort();
        const texts = (await Promise.all(names.map((name) => callTool("${tool}", { path: ${at} + "/" + name })))).map((r) => r.content[0].text);`;
}

function tasks(workspace: string): Task[] {
  const at = JSON.stringify(workspace);
  return [
    {
      name: `word counts of ${FILES} files`,
      async byCalls(caller) {
        const { names, texts } = await eachFile(caller, workspace, 'filesystem_read_text_file');
        return Object.fromEntries(names.map((name, index) => [name, words(texts[index]!)]));
      },
      script: `${eachFileScript(at, 'filesystem.read_text_file')}
        return Object.fromEntries(names.map((name, i) => [name, texts[i].split(/\\s+/).filter(Boolean).length]));`,
    },
    {
      name: `3 largest of ${FILES} files by get_file_info`,
      async byCalls(caller) {
        const { names, texts } = await eachFile(caller, workspace, 'filesystem_get_file_info');
        const sizes = names.map((name, index) => ({ name, size: Number(/^size: (\d+)/m.exec(texts[index]!)?.[1]) }));
        return sizes.sort((a, b) => b.size - a.size || a.name.localeCompare(b.name)).slice(0, 3);
      },
      script: `${eachFileScript(at, 'filesystem.get_file_info')}
        const sizes = names.map((name, i) => ({ name, size: Number(/^size: (\\d+)/m.exec(texts[i])[1]) }));
        return sizes.sort((a, b) => b.size - a.size || a.name.localeCompare(b.name)).slice(0, 3);`,
    },
    {
      name: `urgent ones of ${ENTITIES} memory entities`,
      async prepare(client) {
        const entities = Array.from({ length: ENTITIES }, (_, index) => ({
          name: `task-${index}`,
          entityType: 'task',
          observations: [
            `created for the bench, number ${index}`,
            index % 7 === 0 ? 'priority: urgent' : 'priority: later',
            'owner: the bench',
          ],
        }));
        await client.callTool({ name: 'call-tool', arguments: { tool: 'memory.create_entities', arguments: { entities } } });
      },
      async byCalls(caller) {
        const graph = await caller.round(async () => JSON.parse(textOf(await caller.call('memory_read_graph', {}))) as MemoryGraph);
        return urgent(graph);
      },
      script: `
        const graph = JSON.parse((await callTool("memory.read_graph", {})).content[0].text);
        return graph.entities.filter((e) => e.observations.includes("priority: urgent")).map((e) => e.name).sort();`,
    },
  ];
}

interface MemoryGraph {
  entities: Array<{ name: string; observations: string[] }>;
}

function urgent(graph: MemoryGraph): string[] {
  return graph.entities
    .filter((entity) => entity.observations.includes('priority: urgent'))
    .map((entity) => entity.name)
    .sort();
}

async function writeWorkspace(workspace: string): Promise<void> {
  await mkdir(workspace, { recursive: true });
  for (let index = 0; index < FILES; index++) {
    // Files of a few hundred words to a few KB, as notes or source files are.
    const text = Array.from({ length: 120 + index * 37 }, (_, word) => `word${(word * 31 + index) % 997}`).join(' ');
    await writeFile(path.join(workspace, `note-${String(index).padStart(2, '0')}.txt`), `${text}\n`);
  }
}

// The tools equip-and-call equips (it calls them by loadout's flattened names, server_tool).
const EQUIPPED = ['filesystem.list_directory', 'filesystem.read_text_file', 'filesystem.get_file_info', 'memory.read_graph'];

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'loadout-bench-code-'));
  try {
    const workspace = path.join(root, 'workspace');
    const configDir = path.join(root, 'config');
    await writeWorkspace(workspace);
    await mkdir(configDir, { recursive: true });
    const servers = {
      filesystem: { command: process.execPath, args: [FILESYSTEM, workspace] },
      memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(root, 'memory.jsonl') } },
    };
    await writeFile(path.join(configDir, 'servers.yaml'), stringify({ servers }));
    const gateway = await spawnLoadout(['--config', configDir, '--data', path.join(root, 'data')]);
    try {
      const { client } = gateway;
      // Both ways start warm: the servers discovered and running.
      await client.callTool({ name: 'discover-all-tools', arguments: { query: 'read a file' } });
      const equipped = await client.callTool({
        name: 'build-toolset',
        arguments: { name: 'bench', tools: EQUIPPED, equip: true },
      });
      const equipBytes = Buffer.byteLength(JSON.stringify(equipped.content));
      const signatures = await client.callTool({
        name: 'discover-all-tools',
        arguments: { query: 'list read file info graph', limit: 5, types: true },
      });
      const signatureBytes = Buffer.byteLength(JSON.stringify(signatures.content));
      const rows: Array<{ task: string; calls: Run; code: Run }> = [];
      for (const task of tasks(workspace)) {
        await task.prepare?.(client);
        rows.push({ task: task.name, calls: await byCalls(client, task, equipBytes), code: await byScript(client, task) });
      }
      report(rows, signatureBytes);
    } finally {
      await gateway.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// Equip-and-call: the equip answer counts once per task (each task would equip its own tools), and
// its turn; then each round of calls is a turn, and the answer one more.
async function byCalls(client: Client, task: Task, equipBytes: number): Promise<Run> {
  const caller = new Caller(client);
  const started = performance.now();
  const answer = await task.byCalls(caller);
  return { resultBytes: caller.resultBytes + equipBytes, turns: 1 + caller.rounds + 1, wallMs: performance.now() - started, answer };
}

// run-code: one call, one answer.
async function byScript(client: Client, task: Task): Promise<Run> {
  const started = performance.now();
  const result = await client.callTool({ name: 'run-code', arguments: { code: task.script } });
  const wallMs = performance.now() - started;
  if (result.isError) throw new Error(`run-code failed for ${task.name}: ${textOf(result)}`);
  return { resultBytes: Buffer.byteLength(JSON.stringify(result.content)), turns: 2, wallMs, answer: JSON.parse(textOf(result)) };
}

function report(rows: ReadonlyArray<{ task: string; calls: Run; code: Run }>, signatureBytes: number): void {
  console.log('task | result bytes: equip-and-call → run-code (fewer) | turns | wall time of the calls | same answer');
  let allSame = true;
  let callBytes = 0;
  let codeBytes = 0;
  for (const { task, calls, code } of rows) {
    const same = isDeepStrictEqual(calls.answer, code.answer);
    allSame &&= same;
    callBytes += calls.resultBytes;
    codeBytes += code.resultBytes;
    console.log(
      `${task} | ${formatBytes(calls.resultBytes)} → ${formatBytes(code.resultBytes)} (${percent(1 - code.resultBytes / calls.resultBytes)}) | ` +
        `${calls.turns} → ${code.turns} | ${formatMs(calls.wallMs)} → ${formatMs(code.wallMs)} | ${same ? 'yes' : 'NO'}`,
    );
  }
  const fewer = 1 - codeBytes / callBytes;
  console.log(
    `all three | ${formatBytes(callBytes)} → ${formatBytes(codeBytes)} (${percent(fewer)} fewer; goal ≥ ${percent(GOAL)}) | | | ${allSame ? 'yes' : 'NO'}`,
  );
  console.log(
    `Schemas the model reads first, not counted above: the equipped tools' tools/list entries, or discover-all-tools {types: true} (${formatBytes(signatureBytes)}).`,
  );
  if (!allSame || fewer < GOAL) process.exitCode = 1;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)} %`;
}

await main();
