// Where loadout keeps its files: the config dir (human-edited YAML) and the data dir (state
// owned by loadout). Resolution is explicit so tests never touch the real home directory.
import path from 'node:path';
import envPaths from 'env-paths';

/** The directories and files of one loadout installation. */
export interface LoadoutPaths {
  configDir: string;
  dataDir: string;
  serversFile: string;
  toolsetsDir: string;
  stateFile: string;
  catalogCacheFile: string;
  /** OAuth client registrations and tokens of HTTP servers, one 0600 file per server. */
  oauthDir: string;
  /** servers.yaml parsed, keyed by its text's hash (a warm-start shortcut). */
  parsedServersFile: string;
}

/** Resolve paths: explicit option, then $LOADOUT_CONFIG_DIR / $LOADOUT_DATA_DIR, then XDG defaults. */
export function resolvePaths(options: { configDir?: string; dataDir?: string } = {}, env = process.env): LoadoutPaths {
  const defaults = envPaths('loadout', { suffix: '' });
  const configDir = path.resolve(options.configDir ?? env.LOADOUT_CONFIG_DIR ?? defaults.config);
  const dataDir = path.resolve(options.dataDir ?? env.LOADOUT_DATA_DIR ?? defaults.data);
  return {
    configDir,
    dataDir,
    serversFile: path.join(configDir, 'servers.yaml'),
    toolsetsDir: path.join(configDir, 'toolsets'),
    stateFile: path.join(dataDir, 'state.json'),
    catalogCacheFile: path.join(dataDir, 'catalog.json'),
    parsedServersFile: path.join(dataDir, 'servers.parsed.json'),
    oauthDir: path.join(dataDir, 'oauth'),
  };
}
