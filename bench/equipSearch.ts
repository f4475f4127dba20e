// Rows 4 and 5: loadout at catalog scale (10,000 cached tools on 200 lazy servers). Search ranks
// the whole catalog for a query; equip exposes 1,000 of the tools with exactly one list_changed.
// The floor for search and equip is the round trip of a meta-tool that does no work
// (get-active-toolset); for build+equip it is saving the same file the same way, in this process.
import type { Client } from '@modelcontextprotocol/client';
import path from 'node:path';
import { stringify } from 'yaml';
import { updateTextFile } from '../src/config/index.js';
import { createSetup } from './catalogFixture.js';
import { spawnLoadout, type McpProcess } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize, timeMs } from './stats.js';

const SERVERS = 200;
const TOOLS_PER_SERVER = 50;
const TOOLSET_SIZE = 1000;
const EQUIP_TARGET_MS = 20;
const SEARCH_TARGET_MS = 10;
const QUERIES = [
  'create issue',
  'list files',
  'delete user',
  'invoice',
  'search messages',
  'sync calendar events',
  'export report',
  'archive ticket',
  'metric',
  'branch',
];

/** Rows 4a–4b and 5a–5b. */
export async function benchEquipAndSearch(context: BenchContext): Promise<BenchRow[]> {
  const setup = await createSetup({ servers: SERVERS, toolsPerServer: TOOLS_PER_SERVER });
  // Two disjoint 1,000-tool toolsets spread over every server, so each equip changes the list.
  const toolsets = [0, 1].map((offset) => setup.toolIds.filter((_, index) => index % 10 === offset).slice(0, TOOLSET_SIZE));
  let notifications = 0;
  let onNotification: () => void = () => undefined;
  let onRelisted: (count: number) => void = () => undefined;
  let gateway: McpProcess | undefined;
  try {
    gateway = await spawnLoadout(setup.args, [], { relist: { onRelisted: (tools) => onRelisted(tools.length) } });
    gateway.onListChanged(() => {
      notifications++;
      onNotification();
    });
    const client = gateway.client;
    const floor = summarize(await repeat(context.scale.searchQueries, () => metaCall(client, 'get-active-toolset', {})));

    const firstSearchMs = await timeMs(() => metaCall(client, 'discover-all-tools', { query: 'update document', limit: 20 }));
    const search = summarize(
      await repeat(context.scale.searchQueries, (index) =>
        metaCall(client, 'discover-all-tools', { query: QUERIES[index % QUERIES.length], limit: 20 }),
      ),
    );

    // One timed equip: call → list_changed → re-listed tools/list → call result.
    const timeEquip = async (name: string, args: Record<string, unknown>) => {
      const before = notifications;
      const startedAt = performance.now();
      const listChanged = new Promise<number>((resolve) => (onNotification = () => resolve(performance.now() - startedAt)));
      const relisted = new Promise<{ ms: number; count: number }>(
        (resolve) => (onRelisted = (count) => resolve({ ms: performance.now() - startedAt, count })),
      );
      await metaCall(client, name, args);
      const result = { toListChangedMs: await listChanged, ...(await relisted), notifications: notifications - before };
      if (result.count < TOOLSET_SIZE) throw new Error(`equip exposed ${result.count} tools, expected ${TOOLSET_SIZE}`);
      return result;
    };
    const saveFloor = summarize(
      await repeat(context.scale.equipRepeats, (index) =>
        updateTextFile(path.join(setup.paths.dataDir, `floor-${index % 2}.yaml`), () =>
          stringify({ name: 'floor', tools: toolsets[index % 2] }, { lineWidth: 0 }),
        ),
      ),
    );
    const built = [];
    for (let index = 0; index < context.scale.equipRepeats; index++) {
      built.push(await timeEquip('build-toolset', { name: `set-${index % 2}`, tools: toolsets[index % 2], equip: true }));
    }
    const equipped = [];
    for (let index = 0; index < context.scale.equipRepeats; index++)
      equipped.push(await timeEquip('equip-toolset', { name: `set-${index % 2}` }));
    // A late second notification would arrive after the call returned: give it time to show.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const expected = built.length + equipped.length;
    const perEquip = Math.max(...[...built, ...equipped].map((sample) => sample.notifications));

    return [
      equipRow(
        '4a',
        'build-toolset 1,000 of 10,000 tools + equip',
        built,
        { name: 'saving the file (YAML + locked atomic write)', p50: saveFloor.p50 },
        notifications === expected && perEquip === 1,
      ),
      equipRow(
        '4b',
        'equip-toolset 1,000 tools (saved)',
        equipped,
        { name: 'no-op meta-tool', p50: floor.p50 },
        notifications === expected && perEquip === 1,
      ),
      {
        id: '5a',
        figure: 'discover-all-tools query over 10,000 tools, first (builds index)',
        loadout: formatMs(firstSearchMs),
        limit: `no-op meta-tool ${formatMs(floor.p50)}`,
        ratio: ratio(firstSearchMs, floor.p50),
        target: '—',
        values: { firstSearchMs, floorP50Ms: floor.p50 },
      },
      {
        id: '5b',
        figure: `discover-all-tools query over 10,000 tools (n=${search.n})`,
        loadout: `${formatMs(search.p50)} (p99 ${formatMs(search.p99)})`,
        limit: `no-op meta-tool ${formatMs(floor.p50)}`,
        ratio: ratio(search.p50, floor.p50),
        target: `≤ ${SEARCH_TARGET_MS} ms`,
        pass: search.p50 <= SEARCH_TARGET_MS,
        values: { searchP50Ms: search.p50, searchP99Ms: search.p99, floorP50Ms: floor.p50, floorP99Ms: floor.p99 },
      },
    ];
  } finally {
    await gateway?.close();
    await setup.cleanup();
  }
}

function equipRow(
  id: string,
  figure: string,
  samples: Array<{ toListChangedMs: number; ms: number; notifications: number }>,
  floor: { name: string; p50: number },
  oneNotification: boolean,
): BenchRow {
  const toChange = summarize(samples.map((sample) => sample.toListChangedMs));
  const toList = summarize(samples.map((sample) => sample.ms));
  return {
    id,
    figure: `${figure}: → list_changed; → new tools/list; notifications`,
    loadout: `${formatMs(toChange.p50)} (p99 ${formatMs(toChange.p99)}); ${formatMs(toList.p50)}; ${oneNotification ? '1 each' : 'NOT 1 each'}`,
    limit: `${floor.name} ${formatMs(floor.p50)}`,
    ratio: ratio(toChange.p50, floor.p50),
    target: `≤ ${EQUIP_TARGET_MS} ms, 1 list_changed`,
    pass: toChange.p50 <= EQUIP_TARGET_MS && oneNotification,
    values: {
      toListChangedP50Ms: toChange.p50,
      toListChangedP99Ms: toChange.p99,
      toNewListP50Ms: toList.p50,
      toNewListP99Ms: toList.p99,
      floorP50Ms: floor.p50,
      oneNotificationEach: oneNotification ? 1 : 0,
    },
  };
}

async function metaCall(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
}

async function repeat(times: number, operation: (index: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < times; index++) samples.push(await timeMs(() => operation(index)));
  return samples;
}
