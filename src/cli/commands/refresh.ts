// `loadout refresh [SERVER...] [--all]`: re-discover servers (starting and stopping them itself), smart-merge
// their tools into servers.yaml, and report what was added, went stale, came back or changed.
import { Argument, type Command } from 'commander';
import { loadServersFile } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import { configNotFound, requireServer } from '../configView.js';
import { discoverServers, discoveryJson, failureOf, printDiscovery } from '../discovery.js';
import { printJson, printLines } from '../output.js';
import { commandEnvironment, openCommandStore } from '../program.js';

/** Register `refresh` on the program. */
export function registerRefresh(program: Command): void {
  program
    .command('refresh')
    .description('re-discover tools (every enabled server, or the ones named) and update servers.yaml, keeping your settings')
    .addArgument(new Argument('[servers...]', 'only these servers').default(undefined, 'every enabled server'))
    .option('--all', 'every enabled server (the default without SERVER)')
    .option('--accept-changed', 'approve tools whose schema or description changed upstream (clears "changed")')
    .option('--json', 'machine-readable output')
    .action(async (servers: string[], options: { all?: boolean; acceptChanged?: boolean; json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      if (options.all && servers.length)
        throw new LoadoutError('INVALID_ARGUMENT', `give servers or --all, not both (got --all and ${servers.join(', ')})`);
      // An invalid entry is left out, and named at the end; the other servers are refreshed.
      const loaded = await loadServersFile(paths.serversFile, { skipBrokenServers: true });
      if (!loaded.exists) throw configNotFound(paths);
      const disabled = servers.filter((server) => !requireServer(loaded.config, server, loaded.brokenServers).enabled);
      if (disabled.length) {
        throw new LoadoutError(
          'SERVER_DISABLED',
          `Server${disabled.length === 1 ? '' : 's'} ${disabled.map((name) => `'${name}'`).join(', ')} ${disabled.length === 1 ? 'is' : 'are'} disabled in servers.yaml (enabled: false); enable ${disabled.length === 1 ? 'it' : 'them'} to refresh`,
        );
      }
      const targets = servers.length ? [...new Set(servers)] : undefined;
      const store = await openCommandStore(storeUrl, logger);
      const results = await discoverServers(paths, logger, targets, { acceptChanged: options.acceptChanged, store });
      if (options.json) printJson({ file: paths.serversFile, results: discoveryJson(results) });
      else if (!results.length) printLines('No enabled servers in servers.yaml; nothing to refresh.');
      else printDiscovery(results);
      const failure = failureOf(results);
      // An invalid entry fails the refresh too, once the others are refreshed: named on stderr, exit 1.
      const broken = [...loaded.brokenServers.values()];
      if (broken.length) throw new LoadoutError('CONFIG_INVALID', [...broken, ...(failure ? [failure.message] : [])].join('\n'));
      if (failure) throw failure;
    });
}
