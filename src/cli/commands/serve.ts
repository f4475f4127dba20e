// `loadout serve`: run the gateway as an MCP server over stdio until the client goes away.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { createGateway } from '../../gateway/index.js';
import { importOnFirstRun } from '../importServers.js';
import { commandEnvironment } from '../program.js';

/** Register `serve` on the program. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the gateway as an MCP server over stdio')
    .option('--equip <toolset>', 'equip this toolset at start (overrides the remembered one; "all" for every tool)')
    .action(async (options: { equip?: string }, command: Command) => {
      const { paths, logger } = commandEnvironment(command);
      await importOnFirstRun(paths);
      const gateway = await createGateway({ paths, logger, equip: options.equip });
      let stopping = false;
      const stop = async (reason: string): Promise<void> => {
        if (stopping) return;
        stopping = true;
        logger.info({ reason }, 'shutting down');
        await gateway.close();
        process.exit(0);
      };
      // Claude Code ends a stdio server by closing its stdin; signals cover everything else.
      process.stdin.on('end', () => void stop('stdin closed'));
      process.on('SIGINT', () => void stop('SIGINT'));
      process.on('SIGTERM', () => void stop('SIGTERM'));
      await gateway.connect(new StdioServerTransport());
    });
}
