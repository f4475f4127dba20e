// `loadout list`: the tools of the catalog from the config dir — enabled ones by default,
// disabled and stale ones too with --disabled — with their status and description.
import type { Command } from 'commander';
import { unusableReason } from '../../catalog/index.js';
import { loadConfigView, requireServer, statusWords, toolsOfServer } from '../configView.js';
import { paint, printJson, printLines, printTable } from '../output.js';
import { commandEnvironment } from '../program.js';

const DESCRIPTION_WIDTH = 80;

/** Register `list` on the program. */
export function registerList(program: Command): void {
  program
    .command('list')
    .description('list the tools of the catalog (enabled ones; --disabled adds disabled and stale ones)')
    .option('--server <server>', 'only this server')
    .option('--disabled', 'include disabled and stale tools')
    .option('--json', 'machine-readable output')
    .action(async (options: { server?: string; disabled?: boolean; json?: boolean }, command: Command) => {
      const { paths } = commandEnvironment(command);
      const view = await loadConfigView(paths);
      if (options.server !== undefined) requireServer(view.config, options.server);
      const servers = options.server !== undefined ? [options.server] : Object.keys(view.config.servers);
      const tools = servers.flatMap((server) => toolsOfServer(view, server)).filter((tool) => options.disabled || (tool.enabled && !tool.stale));
      if (options.json) {
        printJson(tools.map((tool) => ({ ...tool, status: statusWords(tool) })));
        return;
      }
      if (!tools.length) {
        const undiscovered = servers.filter((server) => view.config.servers[server]?.enabled && !view.definitions[server]);
        printLines(undiscovered.length ? `No tools known yet for ${undiscovered.join(', ')}; run "loadout refresh".` : 'No tools to show.');
        return;
      }
      printTable(
        ['tool', 'status', 'description'],
        tools.map((tool) => [tool.id, tool.blocked ? paint('red', unusableReason(tool)) : colourStatus(statusWords(tool)), shorten(tool.description)]),
      );
    });
}

function colourStatus(words: string[]): string {
  return words.map((word) => (word === 'changed' ? paint('red', word) : word === 'enabled' ? word : paint('yellow', word))).join(', ');
}

function shorten(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > DESCRIPTION_WIDTH ? `${line.slice(0, DESCRIPTION_WIDTH - 1)}…` : line;
}
