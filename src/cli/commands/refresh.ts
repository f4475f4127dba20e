// `loadout refresh [SERVER]`: re-discover servers (starting and stopping them itself), smart-merge
// their tools into servers.yaml, and report what was added, went stale, came back or changed.
import type { Command } from 'commander';
import { loadServersFile } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import { requireServer } from '../configView.js';
import { discoverServers, failureOf, printDiscovery } from '../discovery.js';
import { printJson, printLines } from '../output.js';
import { commandEnvironment } from '../program.js';

/** Register `refresh` on the program. */
export function registerRefresh(program: Command): void {
  program
    .command('refresh')
    .description('re-discover tools (all servers or one) and update servers.yaml, keeping your settings')
    .argument('[server]', 'only this server')
    .option('--accept-changed', 'approve tools whose schema or description changed upstream (clears "changed")')
    .option('--json', 'machine-readable output')
    .action(async (server: string | undefined, options: { acceptChanged?: boolean; json?: boolean }, command: Command) => {
      const { paths, logger } = commandEnvironment(command);
      const loaded = await loadServersFile(paths.serversFile);
      if (!loaded.exists) throw new LoadoutError('CONFIG_NOT_FOUND', `${paths.serversFile} does not exist; create it with "loadout init"`);
      if (server !== undefined && !requireServer(loaded.config, server).enabled) {
        throw new LoadoutError('SERVER_DISABLED', `Server '${server}' is disabled in servers.yaml (enabled: false); enable it to refresh it`);
      }
      const results = await discoverServers(paths, logger, server === undefined ? undefined : [server], { acceptChanged: options.acceptChanged });
      if (options.json) printJson({ file: paths.serversFile, results });
      else if (!results.length) printLines('No enabled servers in servers.yaml; nothing to refresh.');
      else printDiscovery(results);
      const failure = failureOf(results);
      if (failure) throw failure;
    });
}
