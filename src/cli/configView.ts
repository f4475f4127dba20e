// What the read-only CLI commands look at: servers.yaml, the cached definitions and the catalog
// built from both — without a running gateway and without spawning anything.
import { Catalog, readDefinitionCache, storedDefinitions, type CatalogTool, type DefinitionCache } from '../catalog/index.js';
import {
  expansionEnv,
  invalidEntryProblem,
  loadServersConfig,
  serverProblemText,
  serverProblems,
  type LoadoutPaths,
  type ServerConfig,
  type ServerProblem,
  type ServersFile,
  type ServersFileProblem,
} from '../config/index.js';
import { openRuntime, type Runtime } from '../runtime/index.js';
import { LoadoutError, type Logger } from '../shared/index.js';
import type { TeamStore } from '../store/index.js';

/** The config dir as the CLI sees it. */
export interface ConfigView {
  config: ServersFile;
  /** Invalid server entries, left out of `config`, with their file:line:col problem. */
  brokenServers: ReadonlyMap<string, string>;
  /** With `lastGood`: servers.yaml does not parse, and `config` is its last good parse (what `serve` runs on), or empty. */
  fileProblem?: ServersFileProblem;
  definitions: DefinitionCache;
  catalog: Catalog;
}

/** One tool for display: a catalog tool, or a stale entry that only servers.yaml still knows. */
export interface ToolView {
  id: string;
  server: string;
  name: string;
  enabled: boolean;
  stale: boolean;
  changed: boolean;
  /** Changed and withheld by `gateway.block_changed_tools` until approved. */
  blocked: boolean;
  /** False for a tool known only from servers.yaml: its definition is not cached (run refresh). */
  cached: boolean;
  description: string;
}

/** Load servers.yaml (it must exist; with `lastGood`, as `serve` would) and the cached definitions (catalog.json, or the store's in store mode). */
export async function loadConfigView(paths: LoadoutPaths, store?: TeamStore, { lastGood = false } = {}): Promise<ConfigView> {
  const loaded = await loadServersConfig(paths.serversFile, paths.parsedServersFile, { lastGoodOnError: lastGood });
  if (!loaded.exists) throw configNotFound(paths);
  const definitions = store ? await storedDefinitions(store.catalog).read() : await readDefinitionCache(paths.catalogCacheFile);
  const catalog = Catalog.build({
    configs: loaded.config.servers,
    definitions,
    blockChangedTools: loaded.config.gateway.block_changed_tools,
  });
  return {
    config: loaded.config,
    brokenServers: loaded.brokenServers,
    ...(loaded.fileProblem ? { fileProblem: loaded.fileProblem } : {}),
    definitions,
    catalog,
  };
}

/** The view's servers no refresh can discover (see serverProblems): invalid entries, and undiscovered ones using an unset `${VAR}`. */
export function viewProblems(view: ConfigView, paths: LoadoutPaths): Map<string, ServerProblem> {
  const undiscovered = Object.fromEntries(Object.entries(view.config.servers).filter(([server]) => !view.definitions[server]));
  return serverProblems(undiscovered, view.brokenServers, expansionEnv(paths.secretsFile), paths.secretsFile);
}

/** The runtime (see openRuntime) of a command that needs servers.yaml to exist; it closes `store` with itself. */
export async function openConfiguredRuntime(paths: LoadoutPaths, logger: Logger, store?: TeamStore): Promise<Runtime> {
  const runtime = await openRuntime({ paths, logger, ...(store ? { store } : {}) });
  if (runtime.configExists) return runtime;
  await runtime.close();
  throw configNotFound(paths);
}

/** The error of a command that needs servers.yaml, when it does not exist: the same first step everywhere. */
export function configNotFound(paths: LoadoutPaths): LoadoutError {
  return new LoadoutError(
    'CONFIG_NOT_FOUND',
    `${paths.serversFile} does not exist; run "loadout setup <client>" or "loadout init" to import your servers`,
  );
}

/** The config of a named server; SERVER_NOT_FOUND lists the configured ones, CONFIG_INVALID says why one was left out. */
export function requireServer(config: ServersFile, server: string, brokenServers?: ReadonlyMap<string, string>): ServerConfig {
  const found = config.servers[server];
  if (found) return found;
  const problem = brokenServers?.get(server);
  if (problem !== undefined)
    throw new LoadoutError(
      'CONFIG_INVALID',
      `Server '${server}' is left out: its entry in servers.yaml is invalid (${problem}); ${invalidEntryProblem(problem).fix}`,
    );
  const known = Object.keys(config.servers).join(', ') || '(none; add one to servers.yaml or run loadout init)';
  throw new LoadoutError('SERVER_NOT_FOUND', `Server '${server}' is not in servers.yaml; configured servers: ${known}`);
}

/** Every tool of a server: cached ones from the catalog, then stale ones from servers.yaml. */
export function toolsOfServer(view: ConfigView, server: string): ToolView[] {
  const config = view.config.servers[server];
  if (!config) return [];
  const cached = (view.definitions[server]?.tools ?? [])
    .map((definition) => view.catalog.get(`${server}.${definition.name}`))
    .filter((tool): tool is CatalogTool => tool !== undefined);
  const tools: ToolView[] = cached.map((tool) => ({
    id: tool.id,
    server,
    name: tool.name,
    enabled: tool.enabled,
    stale: false,
    changed: tool.changed,
    blocked: tool.blocked,
    cached: true,
    description: tool.description,
  }));
  const known = new Set(tools.map((tool) => tool.name));
  // Without cached definitions (a new data dir), servers.yaml's own list of tools is what is known,
  // so every tool the user named there is still listed.
  const uncached = !view.definitions[server];
  for (const [name, setting] of Object.entries(config.tools ?? {})) {
    if (known.has(name) || (!setting?.stale && !uncached)) continue;
    const stale = setting?.stale === true;
    tools.push({
      id: `${server}.${name}`,
      server,
      name,
      enabled: setting?.enabled !== false,
      stale,
      cached: false,
      changed: false,
      blocked: false,
      description: setting?.description ?? '',
    });
  }
  return tools;
}

/**
 * `1 of 2 servers is not discovered yet (x); run "loadout refresh"`: why a search or list is
 * missing tools. A server with a problem (`problems`: an invalid entry, an unset variable) is
 * named with it and its fix on a line of its own instead: a refresh cannot fix those.
 */
export function undiscoveredText(
  undiscovered: readonly string[],
  configured: number,
  problems: ReadonlyMap<string, ServerProblem> = new Map(),
): string {
  const refreshable = undiscovered.filter((server) => !problems.has(server));
  const names = [...problems.keys(), ...refreshable];
  const one = names.length === 1;
  const refresh = refreshable.length ? `; run "loadout refresh"${problems.size ? ` for ${refreshable.join(', ')}` : ''}` : '';
  const head = `${names.length} of ${configured} server${configured === 1 ? '' : 's'} ${one ? 'is' : 'are'} not discovered yet (${names.join(', ')})${refresh}`;
  return [head, ...[...problems].map(([server, problem]) => `  ${serverProblemText(server, problem)}`)].join('\n');
}

/** Status words of a tool, e.g. ["enabled", "changed"]; a blocked tool is ["blocked", "changed"]. */
export function statusWords(tool: ToolView): string[] {
  const words = [tool.stale ? 'stale' : tool.blocked ? 'blocked' : tool.enabled ? 'enabled' : 'disabled'];
  if (tool.changed) words.push('changed');
  if (!tool.cached && !tool.stale) words.push('not cached');
  return words;
}
