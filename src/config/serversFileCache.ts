// A parsed copy of servers.yaml in the data dir, keyed by a hash of the text. YAML parsing costs
// about 0.1 ms per cached tool entry, JSON.parse a hundredth of that, so a warm start re-parses
// servers.yaml only after it changed. The copy holds the config exactly as ServersFileSchema
// produced it, so it is used without validating it again (that zod parse was ~6 ms of a warm
// start with 50 servers); a hash of the schema is part of the key, so a copy written under
// another schema is re-parsed. The YAML file stays the only source of truth. The copy is also
// servers.yaml's last good parse: `serve` runs on it while the file does not parse.
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { isLoadoutError } from '../shared/index.js';
import { ServersFileSchema, type ServersFile } from './schema.js';
import { SERVERS_FILE_MODE, parseServersFile } from './serversFile.js';
import { readTextIfExists, writeTextAtomic } from './safeWrite.js';

// serversFileSchemaHash() as scripts/bundle.mjs computed it at build time (converting the schema
// costs ~5 ms of a start); undefined when running from source, which computes it per load.
declare const LOADOUT_SERVERS_SCHEMA_HASH: string | undefined;

/**
 * A hash of ServersFileSchema's JSON Schema as read and as produced: fields, types, defaults and
 * strictness, so any change to them re-keys the parsed copies without anyone bumping a version.
 * (Code inside a transform is not part of it; a transform that changes its output must change
 * the schema's shape too, or the copies go stale.)
 */
export function serversFileSchemaHash(): string {
  const hash = createHash('sha256');
  for (const io of ['input', 'output'] as const)
    hash.update(JSON.stringify(z.toJSONSchema(ServersFileSchema, { io, unrepresentable: 'any' })));
  return hash.digest('hex').slice(0, 16);
}

/** The parsed copy as written: the key it is valid for, the validated config and the server entries left out. */
interface ParsedCopy {
  textHash: string;
  /** The schema and the file it was parsed for: a last good parse is used only under the same two. */
  schemaHash?: string;
  file?: string;
  config: ServersFile;
  brokenServers?: Record<string, string>;
}

/** servers.yaml that does not parse, as a gateway runs without it: why, and what it serves instead. */
export interface ServersFileProblem {
  /** The parser's one line: file:line:col and its reason. */
  readonly problem: string;
  /** True when the last good parse is served; false when there was none and no server is. */
  readonly servingLastGood: boolean;
}

/** servers.yaml as a running gateway and the status commands read it. */
interface LoadedServersConfig {
  config: ServersFile;
  exists: boolean;
  /** Invalid server entries, left out of `config` so the others still run, with their file:line:col problem. */
  brokenServers: ReadonlyMap<string, string>;
  /** Set (with `lastGoodOnError`) when the file does not parse and `config` is its last good parse, or empty. */
  fileProblem?: ServersFileProblem;
}

/** How loadServersConfig treats a file that does not parse. */
interface LoadOptions {
  /** Answer with the last good parse (or no servers) and the problem instead of throwing: what `serve` runs on. */
  lastGoodOnError?: boolean;
}

/**
 * servers.yaml's config (empty if the file is missing), from the parsed copy when the text is
 * unchanged. An invalid server entry is left out (see brokenServers); any other problem throws,
 * or with `lastGoodOnError` a file that does not parse gives its last good parse and the problem.
 */
export async function loadServersConfig(file: string, cacheFile: string, options: LoadOptions = {}): Promise<LoadedServersConfig> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { config: emptyConfig(file), exists: false, brokenServers: new Map() };
  const schemaHash = typeof LOADOUT_SERVERS_SCHEMA_HASH === 'string' ? LOADOUT_SERVERS_SCHEMA_HASH : serversFileSchemaHash();
  const textHash = createHash('sha256').update(`${schemaHash}\0${file}\0`).update(text).digest('hex');
  const cached = safeJson(await readTextIfExists(cacheFile).catch(() => undefined));
  if (isCopyFor(cached, textHash)) return { config: cached.config, exists: true, brokenServers: brokenServersOf(cached) };
  let parsed: { config: ServersFile; brokenServers: ReadonlyMap<string, string> };
  try {
    parsed = parseServersFile(text, file, { skipBrokenServers: true });
  } catch (error) {
    if (!options.lastGoodOnError || !isLoadoutError(error) || error.code !== 'CONFIG_INVALID') throw error;
    const lastGood = isLastGoodFor(cached, schemaHash, file) ? cached : undefined;
    return {
      config: lastGood?.config ?? emptyConfig(file),
      exists: true,
      brokenServers: lastGood ? brokenServersOf(lastGood) : new Map(),
      fileProblem: { problem: error.message, servingLastGood: lastGood !== undefined },
    };
  }
  const { config, brokenServers } = parsed;
  // Only a cache: losing a race with another process, or a read-only data dir, costs a re-parse.
  // Private like servers.yaml, whose literal secrets it may copy.
  const copy: ParsedCopy = {
    textHash,
    schemaHash,
    file,
    config,
    ...(brokenServers.size ? { brokenServers: Object.fromEntries(brokenServers) } : {}),
  };
  await writeTextAtomic(cacheFile, JSON.stringify(copy), { mode: SERVERS_FILE_MODE }).catch(() => undefined);
  return { config, exists: true, brokenServers };
}

/** The one line a gateway, doctor and status say about a servers.yaml that does not parse. */
export function serversFileNotice({ problem, servingLastGood }: ServersFileProblem): string {
  return `servers.yaml does not parse (${problem}); ${
    servingLastGood ? 'loadout serves its last good parse' : 'loadout serves no servers (it has no good parse yet)'
  } until it is corrected`;
}

function emptyConfig(file: string): ServersFile {
  return parseServersFile('servers: {}\n', file).config;
}

function brokenServersOf(copy: ParsedCopy): ReadonlyMap<string, string> {
  return new Map(Object.entries(copy.brokenServers ?? {}));
}

function isCopyFor(value: unknown, textHash: string): value is ParsedCopy {
  const copy = value as Partial<Record<keyof ParsedCopy, unknown>> | null | undefined;
  return copy?.textHash === textHash && typeof copy.config === 'object' && copy.config !== null;
}

function isLastGoodFor(value: unknown, schemaHash: string, file: string): value is ParsedCopy {
  const copy = value as Partial<Record<keyof ParsedCopy, unknown>> | null | undefined;
  return copy?.schemaHash === schemaHash && copy.file === file && typeof copy.config === 'object' && copy.config !== null;
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
