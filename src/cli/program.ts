// Options every command shares (--config, --data, --store, --log-level, --log-format) and how they
// become paths, a logger and, in store mode, the team store.
import type { Command } from 'commander';
import { claimDataDir, resolvePaths, type LoadoutPaths } from '../config/index.js';
import { LoadoutError, createLogger, type LogFormat, type Logger, type LogLevel } from '../shared/index.js';
import { openPostgresStore, type TeamStore } from '../store/index.js';
import { printNote } from './output.js';

/** Options on the root command. */
interface GlobalOptions {
  config?: string;
  data?: string;
  store?: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

/**
 * Paths and logger for a command, from the root command's options. `checkOnly`: a dry run, which
 * checks the data dir is this config dir's but writes no mark in it.
 */
export function commandEnvironment(
  command: Command,
  { checkOnly = false }: { checkOnly?: boolean } = {},
): { paths: LoadoutPaths; logger: Logger; options: GlobalOptions; storeUrl: string | undefined } {
  const options = command.optsWithGlobals<GlobalOptions>();
  const paths = commandPaths(command);
  const { adoptedFrom } = claimDataDir(paths, { checkOnly });
  if (adoptedFrom)
    printNote(
      `data dir ${paths.dataDir} belonged to config dir ${adoptedFrom}, which no longer exists; it now belongs to ${paths.configDir}`,
    );
  const storeUrl = options.store ?? (process.env.LOADOUT_STORE_URL || undefined);
  return { paths, logger: createLogger(options.logLevel, options.logFormat), options, storeUrl };
}

/**
 * The team store a state-reading command runs on (`--store` / LOADOUT_STORE_URL), opened; undefined
 * without one (files). Store mode needs LOADOUT_SECRET_KEY (the store keeps OAuth tokens sealed
 * with it): without it, or with the store unreachable, this throws one line naming why.
 * `listen`: hear other replicas' changes (a gateway does; a one-shot command need not).
 */
export async function openCommandStore(
  storeUrl: string | undefined,
  logger: Logger,
  { listen }: { listen: boolean },
): Promise<TeamStore | undefined> {
  if (!storeUrl) return undefined;
  const secretKey = process.env.LOADOUT_SECRET_KEY;
  if (!secretKey)
    throw new LoadoutError(
      'STORE_SECRET_KEY',
      'store mode (--store or LOADOUT_STORE_URL) needs LOADOUT_SECRET_KEY, the key OAuth tokens are sealed with in the store (make one with `openssl rand -base64 32`, and give every replica the same)',
    );
  return openPostgresStore({ url: storeUrl, secretKey, listen, logger, poolSize: listen ? 10 : 2 });
}

/** The paths the root command's options name, resolved only: the data dir is not claimed (for commands that only read another dir). */
export function commandPaths(command: Command): LoadoutPaths {
  const options = command.optsWithGlobals<GlobalOptions>();
  return resolvePaths({ configDir: options.config, dataDir: options.data });
}

/** Run a one-shot command's `work` with its store open (undefined without one), and close the store after. */
export async function withCommandStore<T>(
  storeUrl: string | undefined,
  logger: Logger,
  work: (store: TeamStore | undefined) => Promise<T>,
): Promise<T> {
  const store = await openCommandStore(storeUrl, logger, { listen: false });
  try {
    return await work(store);
  } finally {
    await store?.close();
  }
}
