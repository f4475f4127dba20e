// A parsed copy of servers.yaml in the data dir, keyed by a hash of the text. YAML parsing costs
// about 0.1 ms per cached tool entry, JSON.parse a hundredth of that, so a warm start re-parses
// servers.yaml only after it changed. The YAML file stays the only source of truth.
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { ServersFileSchema, type ServersFile } from './schema.js';
import { parseServersFile } from './serversFile.js';
import { readTextIfExists, writeTextAtomic } from './safeWrite.js';

const ParsedCacheSchema = z.looseObject({ textHash: z.string(), config: z.unknown() });

/** servers.yaml's config (empty if the file is missing), from the parsed cache when the text is unchanged. */
export async function loadServersConfig(file: string, cacheFile: string): Promise<{ config: ServersFile; exists: boolean }> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { config: parseServersFile('servers: {}\n', file).config, exists: false };
  const textHash = createHash('sha256').update(file).update('\0').update(text).digest('hex');
  const cached = ParsedCacheSchema.safeParse(safeJson(await readTextIfExists(cacheFile).catch(() => undefined)));
  if (cached.success && cached.data.textHash === textHash) {
    const config = ServersFileSchema.safeParse(cached.data.config);
    if (config.success) return { config: config.data, exists: true };
  }
  const { config } = parseServersFile(text, file);
  // Only a cache: losing a race with another process, or a read-only data dir, costs a re-parse.
  await writeTextAtomic(cacheFile, JSON.stringify({ textHash, config })).catch(() => undefined);
  return { config, exists: true };
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
