// The agent-written query set of the search dev set (test/fixtures/search-dev/agent-queries.json):
// what an agent that sees only loadout's instructions and meta-tools would send first.
//
//   node dist/bench/agentQueries.js prompt > prompt.md     the brief for a blind agent
//   node dist/bench/agentQueries.js merge answers.json     its answer → agent-queries.json
//
// `prompt` starts a real `loadout serve` over the dev catalog (cached definitions, no server is
// started) and puts its initialize instructions and tools/list in the brief with the 80 task texts:
// never the catalog, never the expected tools. The agent answers {"d01": {"query": "…", "server"?: "…"}, …};
// `merge` keeps the set's ids, expected tools and hard marks and takes only the query (and server).
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

/** What `loadout serve` tells an agent about itself over the dev catalog. */
async function servedTexts(): Promise<{ instructions: string; tools: Tool[] }> {
  const root = await mkdtemp(path.join(tmpdir(), 'loadout-agent-queries-'));
  try {
    const paths = resolvePaths({ configDir: path.join(root, 'config'), dataDir: path.join(root, 'data') });
    await mkdir(paths.configDir, { recursive: true });
    await mkdir(paths.dataDir, { recursive: true });
    const catalog = JSON.parse(await readFile(path.join(searchDevDir(), 'catalog.json'), 'utf8')) as {
      servers: Record<string, { tools: Tool[] }>;
    };
    const servers: Record<string, unknown> = {};
    const cache: Record<string, CachedServerTools> = {};
    for (const [server, { tools }] of Object.entries(catalog.servers)) {
      // Never started (the definitions are cached), but a real command, so a stray start still works.
      servers[server] = { command: process.execPath, args: [ECHO_FIXTURE] };
      cache[server] = { discoveredAt: new Date().toISOString(), tools };
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

async function devQueries(): Promise<DevQuery[]> {
  return (JSON.parse(await readFile(path.join(searchDevDir(), 'queries.json'), 'utf8')) as { queries: DevQuery[] }).queries;
}

async function prompt(): Promise<string> {
  const { instructions, tools } = await servedTexts();
  const tasks = (await devQueries()).map((query) => `${query.id}: ${query.query}`);
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

async function merge(answerFile: string): Promise<string> {
  const answers = AnswerSchema.parse(JSON.parse(await readFile(answerFile, 'utf8')));
  const queries = (await devQueries()).map((task) => {
    const answer = answers[task.id];
    if (!answer) throw new Error(`${answerFile} has no query for ${task.id}`);
    return { ...task, query: answer.query, ...(answer.server ? { server: answer.server } : {}), task: task.query };
  });
  const file = path.join(searchDevDir(), AGENT_QUERIES_FILE);
  await writeFile(file, `${JSON.stringify({ queries }, null, 2)}\n`);
  return file;
}

const [command, argument] = process.argv.slice(2);
if (command === 'prompt') process.stdout.write(`${await prompt()}\n`);
else if (command === 'merge' && argument) console.log(`wrote ${await merge(argument)}`);
else {
  console.error('usage: node dist/bench/agentQueries.js prompt | merge ANSWERS.json');
  process.exit(2);
}
