// `loadout toolset list|show|create|delete|equip`: saved toolsets from the config dir, without a
// gateway. `equip` only sets the toolset remembered in state.json for the next `serve` start.
import type { Command } from 'commander';
import { unusableReason } from '../../catalog/index.js';
import { StateStore } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import { namingOptions } from '../../gateway/index.js';
import { ALL_TOOLSET, ToolsetStore, resolveToolsetTools, toolsetName, writableToolsetName } from '../../toolsets/index.js';
import { loadConfigView, type ConfigView } from '../configView.js';
import { paint, printJson, printLines, printNote, printTable } from '../output.js';
import { commandEnvironment } from '../program.js';

/** Register `toolset` and its subcommands on the program. */
export function registerToolset(program: Command): void {
  const toolset = program.command('toolset').description('manage saved toolsets (files in <config dir>/toolsets/)');

  toolset
    .command('list')
    .description('list saved toolsets')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { paths } = commandEnvironment(command);
      const { toolsets, problems } = await new ToolsetStore(paths.toolsetsDir).list();
      const remembered = (await new StateStore(paths.stateFile).read()).activeToolset;
      for (const problem of problems) printNote(`skipped ${problem.error}`);
      if (options.json) {
        printJson({ remembered, toolsets: toolsets.map((t) => ({ ...t, remembered: t.name === remembered })), problems });
        return;
      }
      if (!toolsets.length) {
        printLines('No saved toolsets. Create one with "loadout toolset create NAME server.tool …".');
        return;
      }
      printTable(
        ['toolset', 'tools', 'description'],
        toolsets.map((t) => [
          t.name === remembered ? `${t.name} ${paint('green', '(equipped at start)')}` : t.name,
          String(t.tools.length),
          t.description ?? '',
        ]),
      );
    });

  toolset
    .command('show')
    .description('show a saved toolset and the status of each tool')
    .argument('<name>', 'toolset name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { paths } = commandEnvironment(command);
      const saved = await new ToolsetStore(paths.toolsetsDir).get(toolsetName(name));
      const view = await loadConfigView(paths);
      const tools = saved.tools.map((id) => ({ id, status: toolStatus(view, id) }));
      if (options.json) {
        printJson({ ...saved, tools });
        return;
      }
      printLines(`${saved.name}${saved.description ? ` — ${saved.description}` : ''}`);
      printTable(
        ['tool', 'status'],
        tools.map((tool) => [tool.id, tool.status === 'available' ? tool.status : paint('yellow', tool.status)]),
      );
    });

  toolset
    .command('create')
    .description('save a toolset of catalog tools (server.tool names; see "loadout list"); overwrites one of the same name')
    .argument('<name>', 'toolset name (a-z, 0-9, "_", "-")')
    .argument('<tools...>', 'tools as server.tool')
    .option('--description <text>', 'what the toolset is for')
    .option('--json', 'machine-readable output')
    .action(async (name: string, toolIds: string[], options: { description?: string; json?: boolean }, command: Command) => {
      const { paths } = commandEnvironment(command);
      writableToolsetName(name, 'save');
      const view = await loadConfigView(paths);
      const { ids, problems } = resolveToolsetTools(view.catalog, toolIds, namingOptions(view.config.gateway));
      if (problems.length)
        throw new LoadoutError('TOOL_NOT_FOUND', `Toolset '${name}' not saved: ${problems.join('; ')} (see "loadout list")`);
      await new ToolsetStore(paths.toolsetsDir).save({ name, description: options.description, tools: ids });
      if (options.json) printJson({ saved: name, description: options.description ?? null, tools: ids });
      else printLines(`Saved toolset '${name}' with ${ids.length} tool${ids.length === 1 ? '' : 's'}.`);
    });

  toolset
    .command('delete')
    .description('delete a saved toolset')
    .argument('<name>', 'toolset name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { paths } = commandEnvironment(command);
      writableToolsetName(name, 'delete');
      const store = new ToolsetStore(paths.toolsetsDir);
      if (!(await store.delete(name))) await store.get(name); // throws TOOLSET_NOT_FOUND listing the saved ones
      const state = new StateStore(paths.stateFile);
      const forgotten = (await state.read()).activeToolset === name;
      if (forgotten)
        await state.update((current) => ({ ...current, activeToolset: current.activeToolset === name ? null : current.activeToolset }));
      if (options.json) printJson({ deleted: name, forgotten });
      else printLines(`Deleted toolset '${name}'${forgotten ? ' (it will no longer be equipped at start)' : ''}.`);
    });

  toolset
    .command('equip')
    .description('equip a toolset at the next "loadout serve" start ("all" for every tool)')
    .argument('<name>', 'toolset name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { paths } = commandEnvironment(command);
      if (toolsetName(name) !== ALL_TOOLSET) await new ToolsetStore(paths.toolsetsDir).get(name);
      await new StateStore(paths.stateFile).update((state) => ({ ...state, activeToolset: name }));
      if (options.json) printJson({ equipAtStart: name });
      else
        printLines(
          `'${name}' will be equipped when "loadout serve" next starts. Running gateways keep their current toolset (an agent can switch with equip-toolset).`,
        );
    });
}

function toolStatus(view: ConfigView, id: string): string {
  const tool = view.catalog.get(id);
  if (!tool) return 'unknown (stale or not discovered)';
  if (!tool.enabled) return unusableReason(tool);
  return tool.changed ? 'available, changed upstream' : 'available';
}
