// A parsed copy of servers.yaml in the data dir, keyed by a hash of the text. YAML parsing costs
// about 0.1 ms per cached tool entry, JSON.parse a hundredth of that, so a warm start re-parses
// servers.yaml only after it changed. The copy holds the config exactly as ServersFileSchema
// produced it, so it is used without validating it again (that zod parse was ~6 ms of a warm
// start with 50 servers); the schema's version is part of the key, so a copy written under
// another schema is re-parsed. The YAML file stays the only source of truth.
import { createHash } from 'node:crypto';
import { type ServersFile } from './schema.js';
import { parseServersFile } from './serversFile.js';
import { readTextIfExists, writeTextAtomic } from './safeWrite.js';

/** Version of ServersFileSchema the parsed copy was made with; serversFileCache.test.ts says when to bump it. */
export const PARSED_SCHEMA_VERSION = 4;

/** The parsed copy as written: the key it is valid for, and the validated config. */
interface ParsedCopy {
  textHash: string;
  config: ServersFile;
}

/** servers.yaml's config (empty if the file is missing), from the parsed copy when the text is unchanged. */
export async function loadServersConfig(file: string, cacheFile: string): Promise<{ config: ServersFile; exists: boolean }> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { config: parseServersFile('servers: {}\n', file).config, exists: false };
  const textHash = createHash('sha256').update(`${PARSED_SCHEMA_VERSION}\0${file}\0`).update(text).digest('hex');
  const cached = safeJson(await readTextIfExists(cacheFile).catch(() => undefined));
  if (isCopyFor(cached, textHash)) return { config: cached.config, exists: true };
  const { config } = parseServersFile(text, file);
  // Only a cache: losing a race with another process, or a read-only data dir, costs a re-parse.
  const copy: ParsedCopy = { textHash, config };
  await writeTextAtomic(cacheFile, JSON.stringify(copy)).catch(() => undefined);
  return { config, exists: true };
}

function isCopyFor(value: unknown, textHash: string): value is ParsedCopy {
  const copy = value as Partial<Record<keyof ParsedCopy, unknown>> | null | undefined;
  return copy?.textHash === textHash && typeof copy.config === 'object' && copy.config !== null;
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
