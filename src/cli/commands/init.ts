// `loadout init [--from FILE]`: create servers.yaml by importing the servers of an MCP client
// config (or the usual ones found on this machine), then discover their tools (into the team
// store in store mode).
import type { Command } from 'commander';
import { describeImport, importServers } from '../importServers.js';
import { discoverServers, discoveryJson, printDiscoveryStep } from '../discovery.js';
import { printJson, printLines } from '../output.js';
import { commandEnvironment, openCommandStore } from '../program.js';

/** Register `init` on the program. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description('create servers.yaml from an MCP client config (.mcp.json, ~/.claude.json, Claude Desktop, Cursor) and discover tools')
    .option('--from <file>', 'import from this {"mcpServers": …} file instead of looking in the usual places')
    .option('--no-discover', 'only write servers.yaml; discover later with "loadout refresh"')
    .option('--keep-secrets', 'leave literal tokens and keys in servers.yaml (default: move them to secrets.env, mode 0600)')
    .option('--json', 'machine-readable output')
    .action(async (options: { from?: string; discover: boolean; keepSecrets?: boolean; json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      // servers.yaml and secrets.env are configuration, written either way; discoveries go to the
      // store in store mode, opened first so an unreachable one fails before anything is written.
      const store = options.discover ? await openCommandStore(storeUrl, logger) : undefined;
      const outcome = await importServers(paths, {
        from: options.from,
        writeEmpty: true,
        keepSecrets: options.keepSecrets,
        command: 'loadout init',
      }).catch(async (error: unknown) => {
        await store?.close();
        throw error;
      });
      if (!options.json) printLines(...describeImport(outcome, paths));
      const results = options.discover ? await discoverServers(paths, logger, undefined, { progressLines: true, store }) : [];
      if (options.json) {
        printJson({
          file: paths.serversFile,
          found: outcome.result.found.map(({ source, servers }) => ({ ...source, servers })),
          skipped: outcome.result.skipped.map(({ source, ...rest }) => ({ file: source.file, ...rest })),
          secrets: { file: paths.secretsFile, moved: outcome.secrets.keep ? [] : outcome.secrets.moved },
          discovery: discoveryJson(results),
        });
        return;
      }
      // The file is written either way; a server that could not start is worth a note, not a failure.
      printDiscoveryStep(results);
    });
}
