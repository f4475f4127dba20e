#!/usr/bin/env node
// The loadout command line. The CLI is the only place that prints for humans or exits the process.
import { Command, Option } from 'commander';
import { LOG_LEVELS, errorMessage, isLoadoutError } from '../shared/index.js';
import { registerAuth } from './commands/auth.js';
import { registerInit } from './commands/init.js';
import { registerList } from './commands/list.js';
import { registerRefresh } from './commands/refresh.js';
import { registerServe } from './commands/serve.js';
import { registerStatus } from './commands/status.js';
import { registerToolset } from './commands/toolset.js';
import { printError } from './output.js';
import { registerOptimize } from './commands/optimize.js';

const program = new Command('loadout')
  .description('A meta-tool MCP gateway: one MCP server in front of many, with toolsets the agent equips.')
  .version('0.1.0')
  .option('--config <dir>', 'config dir (default: $LOADOUT_CONFIG_DIR or ~/.config/loadout)')
  .option('--data <dir>', 'data dir (default: $LOADOUT_DATA_DIR or ~/.local/share/loadout)')
  .addOption(new Option('--log-level <level>', 'stderr log level').choices(LOG_LEVELS).default('warn'))
  // Usage errors are one line like every other failure: "loadout: <problem> (see --help)".
  .configureOutput({ outputError: (text) => printError(`${text.replace(/^error: /, '').trim()} (see --help)`) });

registerServe(program);
registerInit(program);
registerRefresh(program);
registerStatus(program);
registerList(program);
registerToolset(program);
registerOptimize(program);
registerAuth(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  printError(isLoadoutError(error) ? error.message : errorMessage(error));
  process.exit(1);
});
