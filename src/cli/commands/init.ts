// `loadout init [--from FILE]`: create servers.yaml by importing the servers of an MCP client
// config (or the usual ones found on this machine), then discover their tools.
import type { Command } from 'commander';
import { describeImport, importServers } from '../importServers.js';
import { discoverServers, failureOf, printDiscovery } from '../discovery.js';
import { printJson, printLines, printNote } from '../output.js';
import { commandEnvironment } from '../program.js';

/** Register `init` on the program. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description('create servers.yaml from an MCP client config (.mcp.json, ~/.claude.json, Claude Desktop, Cursor) and discover tools')
    .option('--from <file>', 'import from this {"mcpServers": …} file instead of looking in the usual places')
    .option('--no-discover', 'only write servers.yaml; discover later with "loadout refresh"')
    .option('--json', 'machine-readable output')
    .action(async (options: { from?: string; discover: boolean; json?: boolean }, command: Command) => {
      const { paths, logger } = commandEnvironment(command);
      const outcome = await importServers(paths, { from: options.from, writeEmpty: true });
      if (!options.json) printLines(...describeImport(outcome, paths.serversFile));
      const results = options.discover ? await discoverServers(paths, logger) : [];
      if (options.json) {
        printJson({
          file: paths.serversFile,
          found: outcome.result.found.map(({ source, servers }) => ({ ...source, servers })),
          skipped: outcome.result.skipped.map(({ source, ...rest }) => ({ file: source.file, ...rest })),
          discovery: results,
        });
        return;
      }
      if (results.length) printDiscovery(results);
      // The file is written either way; a server that could not start is worth a note, not a failure.
      const failure = failureOf(results);
      if (failure) printNote(`${failure.message}; fix servers.yaml and run "loadout refresh"`);
    });
}
