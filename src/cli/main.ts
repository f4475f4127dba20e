#!/usr/bin/env node
// The loadout command line. The CLI is the only place that prints for humans or exits the process.
import { Command, Option } from 'commander';
import { LOADOUT_VERSION, LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../shared/index.js';
import { registerAuth } from './commands/auth.js';
import { registerInit } from './commands/init.js';
import { registerList } from './commands/list.js';
import { registerRefresh } from './commands/refresh.js';
import { registerServe } from './commands/serve.js';
import { registerStatus } from './commands/status.js';
import { registerToolset } from './commands/toolset.js';
import { exitQuietlyOnEpipe, failureMessage, printError, useStderrFormat } from './output.js';
import { registerOptimize } from './commands/optimize.js';
import { registerSetup } from './commands/setup.js';
import { registerDoctor } from './commands/doctor.js';
import { registerSearch } from './commands/search.js';

const program = new Command('loadout')
  .description('A meta-tool MCP gateway: one MCP server in front of many, with toolsets the agent equips.')
  .version(LOADOUT_VERSION)
  .option('--config <dir>', 'config dir (default: $LOADOUT_CONFIG_DIR or ~/.config/loadout)')
  .option('--data <dir>', 'data dir (default: $LOADOUT_DATA_DIR or ~/.local/share/loadout)')
  .addOption(new Option('--log-level <level>', 'stderr log level').choices(LOG_LEVELS).default('warn'))
  .addOption(
    new Option('--log-format <format>', 'stderr format: a readable line per event, or JSON lines').choices(LOG_FORMATS).default('human'),
  )
  // Usage errors are one line like every other failure: "loadout: <problem> (see --help)".
  .configureOutput({ outputError: (text) => printError(`${text.replace(/^error: /, '').trim()} (see --help)`) });

// `loadout status | head`: once the reader has gone, stop quietly, as Unix tools do. Not for
// `serve`, whose stdout is the protocol: its transport reports the error and shuts down cleanly.
program.hook('preAction', (_program, command) => {
  if (command.name() !== 'serve') exitQuietlyOnEpipe();
  // Notes and the final error follow the log format: one format on stderr per run.
  useStderrFormat(command.optsWithGlobals<{ logFormat: LogFormat }>().logFormat);
});

registerServe(program);
registerInit(program);
registerRefresh(program);
registerStatus(program);
registerList(program);
registerToolset(program);
registerOptimize(program);
registerSetup(program);
registerDoctor(program);
registerSearch(program);
registerAuth(program);

// A usage error is printed before any action runs; it follows --log-format too.
if (process.argv.some((arg, index) => arg === '--log-format=json' || (arg === '--log-format' && process.argv[index + 1] === 'json')))
  useStderrFormat('json');

program.parseAsync(process.argv).catch((error: unknown) => {
  printError(failureMessage(error));
  process.exit(1);
});
