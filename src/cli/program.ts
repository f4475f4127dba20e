// Options every command shares (--config, --data, --store, --log-level, --log-format) and how they
// become paths, a logger and, in store mode, the team store.
import type { Command } from 'commander';
import { claimDataDir, resolvePaths, type LoadoutPaths } from '../config/index.js';
import { LoadoutError, createLogger, type LogFormat, type Logger, type LogLevel } from '../shared/index.js';
import { openPostgresStore, type FleetStore } from '../store/index.js';
import type { Telemetry } from '../telemetry/index.js';
import { storeConnectionLoss } from './rejectionGuard.js';
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
  return { paths, logger: createLogger(options.logLevel, options.logFormat), options, storeUrl: storeUrlOf(options) };
}

/** The paths the root command's options name, resolved only: the data dir is not claimed (for commands that only read another dir). */
export function commandPaths(command: Command): LoadoutPaths {
  const options = command.optsWithGlobals<GlobalOptions>();
  return resolvePaths({ configDir: options.config, dataDir: options.data });
}

/** The store and logger of a command that works only on a store (`store …`); the data dir is not claimed. */
export function requiredStore(command: Command): { storeUrl: string; logger: Logger } {
  const options = command.optsWithGlobals<GlobalOptions>();
  const storeUrl = storeUrlOf(options);
  if (!storeUrl)
    throw new LoadoutError(
      'INVALID_ARGUMENT',
      'no store named: pass --store postgres://USER:PASSWORD@HOST:PORT/DATABASE or set LOADOUT_STORE_URL',
    );
  return { storeUrl, logger: createLogger(options.logLevel, options.logFormat) };
}

/** Refuse, with one line, a command that has no store-mode form when a store is named; `instead` says what to do. Nothing is written before. */
export function refuseStoreMode(command: Command, instead: string): void {
  if (storeUrlOf(command.optsWithGlobals<GlobalOptions>()))
    throw new LoadoutError('INVALID_ARGUMENT', `${command.name()} does not work in store mode (--store or LOADOUT_STORE_URL): ${instead}`);
}

/** How a command opens its store. */
export interface StoreOpening {
  /** Hear other replicas' changes (a gateway does; a one-shot command need not). Default false. */
  listen?: boolean;
  /** Apply pending migrations at open (the default); `store status` and `doctor` look without changing the schema. */
  migrate?: boolean;
  /**
   * LOADOUT_SECRET_KEY: `required` (the default: a command that may read or write OAuth tokens);
   * `optional` (`store …`: used when set); `unused` (`audit`, which reads no token; `doctor`, once it has found the key unusable).
   */
  secretKey?: 'required' | 'optional' | 'unused';
  /** The data dir a gateway keeps its local copy of the records it serves in (it then starts while the store is away, if the copy holds records). */
  localCopy?: string;
  /** Where the store's statements are measured (serve's telemetry); default: off. */
  telemetry?: Telemetry;
}

/**
 * The team store a command runs on (`--store` / LOADOUT_STORE_URL), opened; undefined without one
 * (files). Store mode needs LOADOUT_SECRET_KEY (the store keeps OAuth tokens sealed with it):
 * without it, or with the store unreachable, this throws one line naming why.
 */
export async function openCommandStore(storeUrl: string, logger: Logger, opening?: StoreOpening): Promise<FleetStore>;
export async function openCommandStore(
  storeUrl: string | undefined,
  logger: Logger,
  opening?: StoreOpening,
): Promise<FleetStore | undefined>;
export async function openCommandStore(
  storeUrl: string | undefined,
  logger: Logger,
  { listen = false, migrate, secretKey: keyUse = 'required', localCopy, telemetry }: StoreOpening = {},
): Promise<FleetStore | undefined> {
  if (!storeUrl) return undefined;
  const secretKey = keyUse === 'unused' ? undefined : process.env.LOADOUT_SECRET_KEY || undefined;
  if (!secretKey && keyUse === 'required')
    throw new LoadoutError(
      'STORE_SECRET_KEY',
      'store mode (--store or LOADOUT_STORE_URL) needs LOADOUT_SECRET_KEY, the key OAuth tokens are sealed with in the store (make one with `openssl rand -base64 32`, and give every replica the same)',
    );
  return openPostgresStore({
    url: storeUrl,
    secretKey,
    listen,
    logger,
    poolSize: listen ? 10 : 2,
    connectionLoss: storeConnectionLoss,
    ...(migrate === undefined ? {} : { migrate }),
    ...(localCopy === undefined ? {} : { localCopy }),
    ...(telemetry === undefined ? {} : { telemetry }),
  });
}

/** Run a command's `work` with its store open (undefined without one), and close the store after, whatever happens. */
export async function withCommandStore<T>(
  storeUrl: string,
  logger: Logger,
  work: (store: FleetStore) => Promise<T>,
  opening?: StoreOpening,
): Promise<T>;
export async function withCommandStore<T>(
  storeUrl: string | undefined,
  logger: Logger,
  work: (store: FleetStore | undefined) => Promise<T>,
  opening?: StoreOpening,
): Promise<T>;
export async function withCommandStore<T>(
  storeUrl: string | undefined,
  logger: Logger,
  work: (store: FleetStore) => Promise<T>,
  opening?: StoreOpening,
): Promise<T> {
  const store = await openCommandStore(storeUrl, logger, opening);
  try {
    // Undefined only without a URL, which the second signature's `work` accepts.
    return await work(store as FleetStore);
  } finally {
    await store?.close();
  }
}

// `--store`, else LOADOUT_STORE_URL (an empty one is unset).
function storeUrlOf(options: GlobalOptions): string | undefined {
  return options.store ?? (process.env.LOADOUT_STORE_URL || undefined);
}
