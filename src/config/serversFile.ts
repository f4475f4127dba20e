// Reads, validates and rewrites servers.yaml. Rewrites go through the yaml Document API so the
// user's comments and key order survive, and never happen while the file on disk is invalid.
import type { Document } from 'yaml';
import { LoadoutError } from '../shared/index.js';
import { ServersFileSchema, type ServersFile } from './schema.js';
import { readTextIfExists, updateTextFile } from './safeWrite.js';
import { parseYamlFile } from './yamlFile.js';

/** servers.yaml may hold a literal secret (kept with --keep-secrets, or written by hand): every write makes it private. */
export const SERVERS_FILE_MODE = 0o600;

/** A parsed servers.yaml: the validated config plus the document it came from. */
interface LoadedServersFile {
  config: ServersFile;
  document: Document;
  /** False when the file does not exist yet (an empty config stands in for it). */
  exists: boolean;
  /** Server entries left out for being invalid (with skipBrokenServers), with their file:line:col problem. */
  brokenServers: ReadonlyMap<string, string>;
}

/** How servers.yaml is read. */
interface ParseOptions {
  /**
   * Leave out an invalid server entry instead of failing the file, so one typo does not stop every
   * other server; its problem is in `brokenServers`. A write that skips one leaves it as it was.
   */
  skipBrokenServers?: boolean;
}

/** Parse servers.yaml text; malformed YAML or a schema error throws CONFIG_INVALID with line and column. */
export function parseServersFile(text: string, file: string, options: ParseOptions = {}): LoadedServersFile {
  const skippable = options.skipBrokenServers ? 'servers' : undefined;
  const { data, document, skipped } = parseYamlFile(text, file, ServersFileSchema, 'CONFIG_INVALID', skippable);
  return { config: data, document, exists: true, brokenServers: skipped };
}

/** Load servers.yaml; a missing file is an empty config. */
export async function loadServersFile(file: string, options: ParseOptions = {}): Promise<LoadedServersFile> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { ...parseServersFile('servers: {}\n', file), exists: false };
  return parseServersFile(text, file, options);
}

/**
 * Change servers.yaml under the inter-process lock: re-read, let `edit` change the document,
 * validate, write atomically. Throws (and writes nothing) if the file on disk is invalid; with
 * `skipBrokenServers`, an invalid server entry is left out of the `config` the edit sees instead,
 * and the edit must leave it invalid as it was and break no other.
 */
export async function updateServersFile(
  file: string,
  edit: (document: Document, config: ServersFile) => void,
  options: ParseOptions = {},
): Promise<ServersFile> {
  let result: ServersFile | undefined;
  await updateTextFile(
    file,
    (current) => {
      const base = current ?? 'servers: {}\n';
      const loaded = parseServersFile(base, file, options);
      edit(loaded.document, loaded.config);
      const next = loaded.document.toString({ lineWidth: 0 });
      const written = parseServersFile(next, file, options);
      const newlyBroken = [...written.brokenServers].find(([name]) => !loaded.brokenServers.has(name));
      if (newlyBroken) throw new LoadoutError('CONFIG_INVALID', newlyBroken[1]);
      result = written.config;
      // An edit that changed nothing writes nothing (and does not create a missing file).
      return next === base ? undefined : next;
    },
    { mode: SERVERS_FILE_MODE },
  );
  return result!;
}
