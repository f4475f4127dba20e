// The import step shared by `loadout init` and the first `loadout serve`: find MCP client configs
// (or take --from FILE), convert their servers, and create servers.yaml — never over an existing one.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  addSecrets,
  collectImports,
  createServersFile,
  defaultImportSources,
  importedServersYaml,
  readTextIfExists,
  type ImportResult,
  type ImportSource,
  type LoadoutPaths,
} from '../config/index.js';
import { LoadoutError, isLoadoutError } from '../shared/index.js';
import { printNote } from './output.js';
import { describeSecrets, planSecrets, type SecretsPlan } from './secrets.js';

/** Where to import from; `home` and `cwd` default to the real ones (tests pass a temp HOME). */
interface ImportOptions {
  from?: string;
  home?: string;
  cwd?: string;
  /** Create servers.yaml even when no server was found (init does; serve does not). */
  writeEmpty: boolean;
  /** Leave literal secrets in servers.yaml instead of moving them to secrets.env. */
  keepSecrets?: boolean;
  /** The command named in the new file's header. */
  command: string;
}

/** What an import looked at, found and wrote. */
interface ImportOutcome {
  sources: ImportSource[];
  result: ImportResult;
  secrets: SecretsPlan;
  written: boolean;
}

/** Import servers into a new servers.yaml; CONFIG_EXISTS if it exists already. */
export async function importServers(paths: LoadoutPaths, options: ImportOptions): Promise<ImportOutcome> {
  if ((await readTextIfExists(paths.serversFile)) !== undefined) {
    throw new LoadoutError(
      'CONFIG_EXISTS',
      `${paths.serversFile} already exists; loadout never overwrites it. Edit it, or run "loadout refresh" to re-discover tools`,
    );
  }
  const cwd = options.cwd ?? process.cwd();
  const sources = options.from
    ? [{ label: 'given file', file: path.resolve(cwd, options.from) }]
    : defaultImportSources({ home: options.home ?? os.homedir(), cwd, appData: process.env.APPDATA });
  const result = await collectImports(sources, cwd);
  if (options.from && !result.found.length) {
    const exists = (await readTextIfExists(sources[0]!.file)) !== undefined;
    throw new LoadoutError(
      'CONFIG_NOT_FOUND',
      exists ? `${sources[0]!.file} has no "mcpServers" entries to import` : `${sources[0]!.file} does not exist`,
    );
  }
  const count = Object.keys(result.servers).length;
  const secrets = await planSecrets(paths, result.servers, options.keepSecrets === true);
  if (!count && !options.writeEmpty) return { sources, result, secrets, written: false };
  // The secrets first: servers.yaml never refers to a variable secrets.env does not hold yet.
  await addSecrets(paths.secretsFile, secrets.values);
  await createServersFile(paths.serversFile, importedServersYaml({ ...result, servers: secrets.servers }, options.command));
  return { sources, result, secrets, written: true };
}

/** Human lines saying what an import found and did, for stdout (init) or stderr (serve). */
export function describeImport(
  outcome: ImportOutcome,
  { serversFile, secretsFile }: Pick<LoadoutPaths, 'serversFile' | 'secretsFile'>,
): string[] {
  const lines: string[] = [];
  for (const { source, servers } of outcome.result.found) {
    lines.push(`${source.label} (${source.file}): ${servers.length ? servers.join(', ') : 'no importable servers'}`);
  }
  for (const skipped of outcome.result.skipped) lines.push(`skipped '${skipped.name}' from ${skipped.source.file}: ${skipped.reason}`);
  if (!outcome.result.found.length)
    lines.push(`no MCP client config found (looked in ${outcome.sources.map((source) => source.file).join(', ')})`);
  const count = Object.keys(outcome.result.servers).length;
  if (outcome.written) lines.push(`wrote ${serversFile} with ${count} server${count === 1 ? '' : 's'}`);
  if (outcome.written) lines.push(...describeSecrets(outcome.secrets, secretsFile, 'Moved'));
  return lines;
}

/** `serve` with no servers.yaml: import what the usual client configs hold and say so on stderr. */
export async function importOnFirstRun(paths: LoadoutPaths): Promise<void> {
  // A stat, not a read: serve reads the file right after this, and every async read delays its start.
  if (existsSync(paths.serversFile)) return;
  let outcome: ImportOutcome;
  try {
    outcome = await importServers(paths, { writeEmpty: false, command: 'loadout serve' });
  } catch (error) {
    // Another gateway created the file first: use it.
    if (isLoadoutError(error, 'CONFIG_EXISTS')) return;
    throw error;
  }
  printNote(`no servers.yaml in ${paths.configDir}; importing MCP servers from your clients' configs`);
  for (const line of describeImport(outcome, paths)) printNote(line);
  if (!outcome.written)
    printNote('starting with no servers; add them to servers.yaml (it is picked up while running) or run "loadout init --from FILE"');
}
