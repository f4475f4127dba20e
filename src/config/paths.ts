// Where loadout keeps its files: the config dir (human-edited YAML) and the data dir (state
// owned by loadout). Resolution is explicit so tests never touch the real home directory.
// A data dir belongs to one config dir: the catalog, the equipped toolset and the optimization
// state in it describe that config's servers, so no two config dirs may share one.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import envPaths from 'env-paths';
import { LoadoutError, errorMessage } from '../shared/index.js';

/** The directories and files of one loadout installation. */
export interface LoadoutPaths {
  configDir: string;
  dataDir: string;
  serversFile: string;
  /** Literal secrets moved out of servers.yaml (NAME=value, mode 0600), for `${VAR}` expansion. */
  secretsFile: string;
  toolsetsDir: string;
  stateFile: string;
  catalogCacheFile: string;
  /** OAuth client registrations and tokens of HTTP servers, one 0600 file per server. */
  oauthDir: string;
  /** servers.yaml parsed, keyed by its text's hash (a warm-start shortcut). */
  parsedServersFile: string;
  /** The user's synonym groups for catalog search (optional). */
  synonymsFile: string;
  /** Example requests per tool hash, from `loadout enrich`. */
  exampleRequestsFile: string;
  /** Tool embeddings from `search.embeddings`, by model and tool hash. */
  embeddingsCacheFile: string;
}

/** The file in a data dir naming the config dir whose state it holds. */
export const DATA_DIR_OWNER_FILE = 'config-dir';

/**
 * Resolve paths: explicit option, then $LOADOUT_CONFIG_DIR / $LOADOUT_DATA_DIR, then XDG defaults.
 * A config dir other than the default, with no data dir given, gets its own data dir derived from
 * it (`<default data dir>/configs/<name>-<hash>`), so two config dirs never share a catalog.
 */
export function resolvePaths(options: { configDir?: string; dataDir?: string } = {}, env = process.env): LoadoutPaths {
  const defaults = envPaths('loadout', { suffix: '' });
  // An empty variable (`LOADOUT_CONFIG_DIR=`) is unset: path.resolve('') is the current folder.
  const configDir = path.resolve(options.configDir ?? (env.LOADOUT_CONFIG_DIR || undefined) ?? defaults.config);
  const explicitDataDir = options.dataDir ?? (env.LOADOUT_DATA_DIR || undefined);
  const dataDir = path.resolve(
    explicitDataDir ?? (configDir === path.resolve(defaults.config) ? defaults.data : derivedDataDir(defaults.data, configDir)),
  );
  return {
    configDir,
    dataDir,
    serversFile: path.join(configDir, 'servers.yaml'),
    secretsFile: path.join(configDir, 'secrets.env'),
    toolsetsDir: path.join(configDir, 'toolsets'),
    stateFile: path.join(dataDir, 'state.json'),
    catalogCacheFile: path.join(dataDir, 'catalog.json'),
    parsedServersFile: path.join(dataDir, 'servers.parsed.json'),
    synonymsFile: path.join(configDir, 'synonyms.yaml'),
    embeddingsCacheFile: path.join(dataDir, 'embeddings-cache.json'),
    exampleRequestsFile: path.join(dataDir, 'example-requests.json'),
    oauthDir: path.join(dataDir, 'oauth'),
  };
}

// `<base>/configs/<last path segment>-<12 hex of the absolute config dir's hash>`: readable, and
// distinct for two config dirs with the same name.
function derivedDataDir(base: string, configDir: string): string {
  const hash = createHash('sha256').update(configDir).digest('hex').slice(0, 12);
  const name = path.basename(configDir).replace(/[^\w.-]/g, '_') || 'root';
  return path.join(base, 'configs', `${name}-${hash}`);
}

/**
 * Claim the data dir for the config dir: record the config dir in it on first use, and refuse a
 * data dir that already holds another config dir's state (its catalog would expose and forward
 * to servers this config does not have). A data dir whose config dir no longer exists was moved
 * or copied with it: it is adopted, and `adoptedFrom` names the config dir it held before.
 */
export function claimDataDir(
  paths: Pick<LoadoutPaths, 'configDir' | 'dataDir'>,
  /** Check the claim but write nothing (a dry run promises no change). */
  { checkOnly = false }: { checkOnly?: boolean } = {},
): { adoptedFrom?: string } {
  const ownerFile = path.join(paths.dataDir, DATA_DIR_OWNER_FILE);
  let owner: string | undefined;
  try {
    owner = readFileSync(ownerFile, 'utf8').trim();
  } catch (error) {
    // Only a missing file means the data dir is unclaimed; one that cannot be read is not ours to overwrite.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new LoadoutError('STATE_INVALID', `cannot read ${ownerFile} (${errorMessage(error)}); fix it or pass --data DIR`);
    }
  }
  if (owner === paths.configDir) return {};
  if (owner && existsSync(owner)) {
    throw new LoadoutError(
      'DATA_DIR_IN_USE',
      `data dir ${paths.dataDir} holds the state of config dir ${owner}, not ${paths.configDir}; pass --data DIR with a data dir of its own (or leave --data out: each config dir then gets one)`,
    );
  }
  if (checkOnly) return {};
  mkdirSync(paths.dataDir, { recursive: true });
  writeFileSync(ownerFile, `${paths.configDir}\n`);
  return owner ? { adoptedFrom: owner } : {};
}
