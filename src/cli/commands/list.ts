// `loadout list`: every tool of the catalog from the config dir (exposed, filtered and stale
// alike), with its status and description; --enabled / --disabled narrow it.
import type { Command } from 'commander';
import { unusableReason } from '../../catalog/index.js';
import { LoadoutError, oneLine } from '../../shared/index.js';
import { loadConfigView, requireServer, statusWords, toolsOfServer, undiscoveredText, viewProblems, type ToolView } from '../configView.js';
import { paint, printJson, printLines, printTable } from '../output.js';
import { commandEnvironment, withCommandStore } from '../program.js';

const DESCRIPTION_WIDTH = 80;

/** Register `list` on the program. */
export function registerList(program: Command): void {
  program
    .command('list')
    .description('list every tool of the catalog with its status (--enabled: only usable ones; --disabled: only hidden ones)')
    .option('--server <server>', 'only this server')
    .option('--enabled', 'only tools agents can use')
    .option('--disabled', 'only hidden tools: disabled, blocked (changed) and stale')
    .option('--json', 'machine-readable output')
    .action(async (options: { server?: string; enabled?: boolean; disabled?: boolean; json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      if (options.enabled && options.disabled)
        throw new LoadoutError('INVALID_ARGUMENT', 'give --enabled or --disabled, not both (without either, every tool is listed)');
      const view = await withCommandStore(storeUrl, logger, (store) => loadConfigView(paths, store));
      if (options.server !== undefined) requireServer(view.config, options.server, view.brokenServers);
      const servers = options.server !== undefined ? [options.server] : Object.keys(view.config.servers);
      const usable = (tool: ToolView): boolean => tool.enabled && !tool.stale;
      const tools = servers
        .flatMap((server) => toolsOfServer(view, server))
        .filter((tool) => (options.enabled ? usable(tool) : options.disabled ? !usable(tool) : true));
      if (options.json) {
        printJson(tools.map((tool) => ({ ...tool, status: statusWords(tool) })));
        return;
      }
      const enabled = servers.filter((server) => view.config.servers[server]?.enabled);
      const undiscovered = enabled.filter((server) => !view.definitions[server]);
      // An invalid entry counts among the servers (it is configured), and is named with its fix.
      const problems = new Map(
        [...viewProblems(view, paths)].filter(([server]) => options.server === undefined || server === options.server),
      );
      const configured = enabled.length + [...problems.keys()].filter((server) => view.brokenServers.has(server)).length;
      const missing = undiscovered.length || problems.size ? undiscoveredText(undiscovered, configured, problems) : undefined;
      if (!tools.length) {
        printLines(missing ? `No tools to list yet: ${missing}` : 'No tools to show.');
        return;
      }
      printTable(
        ['tool', 'status', 'description'],
        tools.map((tool) => [
          tool.id,
          tool.blocked ? paint('red', unusableReason(tool)) : colourStatus(statusWords(tool)),
          oneLine(tool.description, DESCRIPTION_WIDTH),
        ]),
      );
      if (missing) printLines(missing);
    });
}

function colourStatus(words: string[]): string {
  return words.map((word) => (word === 'changed' ? paint('red', word) : word === 'enabled' ? word : paint('yellow', word))).join(', ');
}
