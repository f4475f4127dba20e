// The agent-written query sets of the search dev sets (agent-queries.json beside each set's
// queries.json): what an agent that sees only loadout's instructions and meta-tools would send first.
//
//   node dist/bench/agentQueries.js prompt [large] > prompt.md     the brief for a blind agent
//   node dist/bench/agentQueries.js merge answers.json [large]     its answer → agent-queries.json
//
// `prompt` starts a real `loadout serve` over the set's catalog (cached definitions, with what each
// server says about itself; no server is started) and puts its initialize instructions and
// tools/list in the brief with the task texts: never the catalog, never the expected tools. The
// agent answers {"d01": {"query": "…", "server"?: "…"}, …}; `merge` keeps the set's ids, expected
// tools and hard marks and takes only the query (and server). `large` is the large dev set.
import { Client, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import * as z from 'zod';
import { writeDefinitionCache, type CachedServerTools } from '../src/catalog/index.js';
import { resolvePaths } from '../src/config/index.js';
import { CLI, ECHO_FIXTURE } from './catalogFixture.js';
import { AGENT_QUERIES_FILE, searchDevDir, type DevQuery } from './searchDevSet.js';
import { largeDevDir, loadLargeDevSet } from './searchDevLarge.js';

/** A dev set as the brief needs it: where it lives (its queries.json) and its servers as recorded. */
interface DevSetSource {
  dir: string;
  servers(): Promise<Record<string, { tools: Tool[]; about?: CachedServerTools['about'] }>>;
}

const SETS: Record<'small' | 'large', DevSetSource> = {
  small: {
    dir: searchDevDir(),
    servers: async () =>
      (JSON.parse(await readFile(path.join(searchDevDir(), 'catalog.json'), 'utf8')) as { servers: Record<string, { tools: Tool[] }> })
        .servers,
  },
  large: { dir: largeDevDir(), servers: () => Promise.resolve(loadLargeDevSet().servers) },
};

/** What `loadout serve` tells an agent about itself over the set's catalog. */
async function servedTexts(set: DevSetSource): Promise<{ instructions: string; tools: Tool[] }> {
  const root = await mkdtemp(path.join(tmpdir(), 'loadout-agent-queries-'));
  try {
    const paths = resolvePaths({ configDir: path.join(root, 'config'), dataDir: path.join(root, 'data') });
    await mkdir(paths.configDir, { recursive: true });
    await mkdir(paths.dataDir, { recursive: true });
    const servers: Record<string, unknown> = {};
    const cache: Record<string, CachedServerTools> = {};
    for (const [server, { tools, about }] of Object.entries(await set.servers())) {
      // Never started (the definitions are cached), but a real command, so a stray start still works.
      servers[server] = { command: process.execPath, args: [ECHO_FIXTURE] };
      cache[server] = { discoveredAt: new Date().toISOString(), tools, ...(about ? { about } : {}) };
    }
    await writeFile(paths.serversFile, stringify({ servers }));
    await writeDefinitionCache(paths.catalogCacheFile, cache);
    const client = new Client({ name: 'agent-queries', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', '--config', paths.configDir, '--data', paths.dataDir],
        env: { ...process.env, HOME: root },
        stderr: 'ignore',
      }),
    );
    try {
      return { instructions: client.getInstructions() ?? '', tools: (await client.listTools()).tools };
    } finally {
      await client.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function devQueries(set: DevSetSource): Promise<DevQuery[]> {
  return (JSON.parse(await readFile(path.join(set.dir, 'queries.json'), 'utf8')) as { queries: DevQuery[] }).queries;
}

async function prompt(set: DevSetSource): Promise<string> {
  const { instructions, tools } = await servedTexts(set);
  const tasks = (await devQueries(set)).map((query) => `${query.id}: ${query.query}`);
  const listed = tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  return [
    'You are an AI agent connected to one MCP server, loadout. Below is everything it has told you:',
    'its initialize instructions and its tools/list. You have not called any tool yet.',
    '',
    '## initialize instructions',
    '',
    instructions,
    '',
    '## tools/list',
    '',
    JSON.stringify(listed, null, 1),
    '',
    '## Tasks',
    '',
    'For each task below, a user has asked you for it. Write the arguments of the FIRST',
    'discover-all-tools call you would send to find the tool for it, as you would really send it.',
    'Do not explain. Answer only with one JSON object: {"d01": {"query": "...", "server": "..."}, ...},',
    'with "server" only where you would pass one.',
    '',
    ...tasks,
  ].join('\n');
}

const AnswerSchema = z.record(z.string(), z.object({ query: z.string().min(1), server: z.string().min(1).optional() }));

async function merge(set: DevSetSource, answerFile: string): Promise<string> {
  const answers = AnswerSchema.parse(JSON.parse(await readFile(answerFile, 'utf8')));
  const queries = (await devQueries(set)).map((task) => {
    const answer = answers[task.id];
    if (!answer) throw new Error(`${answerFile} has no query for ${task.id}`);
    return { ...task, query: answer.query, ...(answer.server ? { server: answer.server } : {}), task: task.query };
  });
  const file = path.join(set.dir, AGENT_QUERIES_FILE);
  await writeFile(file, `${JSON.stringify({ queries }, null, 2)}\n`);
  return file;
}

const [command, ...rest] = process.argv.slice(2);
const set = SETS[rest.at(-1) === 'large' ? 'large' : 'small'];
const answers = rest.filter((argument) => argument !== 'large')[0];
if (command === 'prompt') process.stdout.write(`${await prompt(set)}\n`);
else if (command === 'merge' && answers) console.log(`wrote ${await merge(set, answers)}`);
else {
  console.error('usage: node dist/bench/agentQueries.js prompt [large] | merge ANSWERS.json [large]');
  process.exit(2);
}
