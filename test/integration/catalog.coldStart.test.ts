// Cold starts (empty cache) in front of server-everything, several at once: the server adds tools
// once initialized and says tools/list_changed, so the tool-list watch stores tools while
// discovery stores everything. Its prompts and resources must survive in catalog.json and be
// listed by the next warm start, from the cache alone.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  THIRD_PARTY,
  descendantsOf,
  eventually,
  makeTempDirs,
  nodeServer,
  startGateway,
  writeServersYaml,
  type TempDirs,
} from '../helpers/gateway.js';

const PARALLEL = 4;
const ROUNDS = 2;
// server-everything registers its sampling and elicitation tools for a client declaring them.
const CAPABILITIES = { sampling: {}, elicitation: {}, roots: {} };

interface CachedLists {
  tools: unknown[];
  prompts?: unknown[];
  resources?: unknown[];
}

async function cachedEverything(dirs: TempDirs): Promise<CachedLists | undefined> {
  const text = await readFile(path.join(dirs.dataDir, 'catalog.json'), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as { servers: Record<string, CachedLists> }).servers.everything;
}

// One cold start: discovery, then at least one store by the tool-list watch, then exit.
async function coldStart(dirs: TempDirs): Promise<CachedLists | undefined> {
  await writeServersYaml(dirs.configDir, { everything: nodeServer(THIRD_PARTY.everything) });
  const gateway = await startGateway({ dirs, capabilities: CAPABILITIES });
  try {
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    await eventually(() => gateway.stderr().includes('catalog updated'), 15_000, "the tool-list watch's store");
  } finally {
    await gateway.close();
  }
  return cachedEverything(dirs);
}

describe('cold starts in parallel', () => {
  const all: TempDirs[] = [];
  afterEach(async () => {
    await Promise.all(all.splice(0).map((dirs) => dirs.cleanup()));
  });

  it(`keep server-everything's prompts and resources in catalog.json and at the next warm start (${PARALLEL} × ${ROUNDS})`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dirs = await Promise.all(Array.from({ length: PARALLEL }, () => makeTempDirs()));
      all.push(...dirs);
      const cached = await Promise.all(dirs.map((each) => coldStart(each)));
      const lost = cached.filter((entry) => !entry?.prompts?.length || !entry.resources?.length);
      expect(lost.map((entry) => `${entry?.tools.length} tools, prompts and resources lost`)).toEqual([]);

      const warm = await startGateway({ dirs: dirs[0]!, capabilities: CAPABILITIES, args: ['--equip', 'all'] });
      try {
        const prompts = (await warm.client.listPrompts()).prompts.map((prompt) => prompt.name);
        const resources = (await warm.client.listResources()).resources;
        expect(prompts.length).toBe(cached[0]!.prompts!.length);
        expect(prompts.every((name) => name.startsWith('everything'))).toBe(true);
        expect(resources.length).toBe(cached[0]!.resources!.length);
        // From the cache alone: nothing was started to answer.
        expect(await descendantsOf(warm.pid)).toEqual([]);
      } finally {
        await warm.close();
      }
    }
  }, 120_000);
});
