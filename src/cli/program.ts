// Options every command shares (--config, --data, --log-level, --log-format) and how they become paths and a logger.
import type { Command } from 'commander';
import { claimDataDir, resolvePaths, type LoadoutPaths } from '../config/index.js';
import { createLogger, type LogFormat, type Logger, type LogLevel } from '../shared/index.js';
import { printNote } from './output.js';

/** Options on the root command. */
interface GlobalOptions {
  config?: string;
  data?: string;
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
): { paths: LoadoutPaths; logger: Logger; options: GlobalOptions } {
  const options = command.optsWithGlobals<GlobalOptions>();
  const paths = commandPaths(command);
  const { adoptedFrom } = claimDataDir(paths, { checkOnly });
  if (adoptedFrom)
    printNote(
      `data dir ${paths.dataDir} belonged to config dir ${adoptedFrom}, which no longer exists; it now belongs to ${paths.configDir}`,
    );
  return { paths, logger: createLogger(options.logLevel, options.logFormat), options };
}

/** The paths the root command's options name, resolved only: the data dir is not claimed (for commands that only read another dir). */
export function commandPaths(command: Command): LoadoutPaths {
  const options = command.optsWithGlobals<GlobalOptions>();
  return resolvePaths({ configDir: options.config, dataDir: options.data });
}
