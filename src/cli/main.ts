#!/usr/bin/env node
// The loadout command line. The only module that prints for humans or exits the process.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Command, Option } from 'commander';
import { resolvePaths } from '../config/index.js';
import { createGateway } from '../gateway/index.js';
import { LOG_LEVELS, createLogger, errorMessage, isLoadoutError, type LogLevel } from '../shared/index.js';

interface GlobalOptions {
  config?: string;
  data?: string;
  logLevel: LogLevel;
}

const program = new Command('loadout')
  .description('A meta-tool MCP gateway: one MCP server in front of many, with toolsets the agent equips.')
  .version('0.1.0')
  .option('--config <dir>', 'config dir (default: $LOADOUT_CONFIG_DIR or ~/.config/loadout)')
  .option('--data <dir>', 'data dir (default: $LOADOUT_DATA_DIR or ~/.local/share/loadout)')
  .addOption(new Option('--log-level <level>', 'stderr log level').choices(LOG_LEVELS).default('warn'))
  .showHelpAfterError('(add --help for usage)');

program
  .command('serve')
  .description('run the gateway as an MCP server over stdio')
  .option('--equip <toolset>', 'equip this toolset at start (overrides the remembered one; "all" for every tool)')
  .action(async (options: { equip?: string }) => {
    const global = program.opts<GlobalOptions>();
    const logger = createLogger(global.logLevel);
    const gateway = await createGateway({ paths: resolvePaths({ configDir: global.config, dataDir: global.data }), logger, equip: options.equip });
    const transport = new StdioServerTransport();
    let stopping = false;
    const stop = async (reason: string): Promise<void> => {
      if (stopping) return;
      stopping = true;
      logger.info({ reason }, 'shutting down');
      await gateway.close();
      process.exit(0);
    };
    process.stdin.on('end', () => void stop('stdin closed'));
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    await gateway.connect(transport);
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`loadout: ${isLoadoutError(error) ? error.message : errorMessage(error)}\n`);
  process.exit(1);
});
