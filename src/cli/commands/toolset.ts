// `loadout toolset list|show|create|delete|equip|unequip`: saved toolsets from the config dir (or, in
// store mode, the team store), without a gateway. `equip` only sets the toolset remembered for the
// next `serve` start (in state.json, or the store's equipped record under LAST_STOP_KEY); `unequip` clears it.
import type { Command } from 'commander';
import { unusableReason } from '../../catalog/index.js';
import { StateStore, type LoadoutPaths, type ToolsetOwner } from '../../config/index.js';
import { LoadoutError, isLoadoutError } from '../../shared/index.js';
import { namingOptions } from '../../gateway/index.js';
import { LAST_STOP_KEY, type TeamStore } from '../../store/index.js';
import {
  ALL_TOOLSET,
  StoredToolsets,
  ToolsetStore,
  resolveToolsetTools,
  toolsetName,
  writableToolsetName,
  type Toolsets,
} from '../../toolsets/index.js';
import { loadConfigView, type ConfigView } from '../configView.js';
import { paint, printJson, printLines, printNote, printTable } from '../output.js';
import { commandEnvironment, withCommandStore } from '../program.js';

/** Register `toolset` and its subcommands on the program. */
export function registerToolset(program: Command): void {
  const toolset = program.command('toolset').description('manage saved toolsets (files in <config dir>/toolsets/)');

  toolset
    .command('list')
    .description('list saved toolsets (--all: with those callers saved, and their owners)')
    .option('--all', "also the toolsets identified callers saved (each one's own), with their owners")
    .option('--json', 'machine-readable output')
    .action(async (options: { all?: boolean; json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const [{ toolsets: saved, problems }, remembered] = await withCommandStore(storeUrl, logger, (store) => {
        const kept = toolsetPlaces(paths, store);
        return Promise.all([kept.toolsets.list(), kept.remembered.read()]);
      });
      // A caller's own toolsets are theirs: listed only when asked for, with whose they are.
      const toolsets = options.all ? saved : saved.filter((t) => !t.owner);
      const owned = saved.length - toolsets.length;
      for (const problem of problems) printNote(`skipped ${problem.error}`);
      if (options.json) {
        printJson({ remembered, toolsets: toolsets.map((t) => ({ ...t, remembered: t.name === remembered })), problems });
        return;
      }
      if (owned) printNote(`${owned} toolset${owned === 1 ? '' : 's'} saved by callers not shown; --all lists them`);
      if (!toolsets.length) {
        printLines('No saved toolsets. Create one with "loadout toolset create NAME server.tool …".');
        return;
      }
      const rows = toolsets.map((t) => [
        t.name === remembered ? `${t.name} ${paint('green', '(equipped at start)')}` : t.name,
        String(t.tools.length),
        t.description ?? '',
      ]);
      if (!options.all) return printTable(['toolset', 'tools', 'description'], rows);
      printTable(
        ['toolset', 'tools', 'description', 'owner'],
        rows.map((row, index) => [...row, ownerText(toolsets[index]!.owner)]),
      );
    });

  toolset
    .command('show')
    .description('show a saved toolset and the status of each tool')
    .argument('<name>', 'toolset name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      // The toolset first: its own problem is the one to name.
      const [saved, view] = await withCommandStore(storeUrl, logger, async (store) => {
        const toolset = await toolsetPlaces(paths, store).toolsets.get(toolsetName(name));
        return [toolset, await loadConfigView(paths, store)] as const;
      });
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
      const { paths, logger, storeUrl } = commandEnvironment(command);
      writableToolsetName(name, 'save');
      const ids = await withCommandStore(storeUrl, logger, async (store) => {
        const view = await loadConfigView(paths, store);
        const resolved = resolveToolsetTools(view.catalog, toolIds, namingOptions(view.config.gateway));
        if (resolved.problems.length)
          throw new LoadoutError('TOOL_NOT_FOUND', `Toolset '${name}' not saved: ${resolved.problems.join('; ')} (see "loadout list")`);
        const { toolsets } = toolsetPlaces(paths, store);
        // Overwritten by the operator, a caller's toolset stays that caller's.
        const { owner } = await toolsets.get(name).catch((error: unknown) => {
          if (isLoadoutError(error, 'TOOLSET_NOT_FOUND', 'TOOLSET_INVALID')) return { owner: undefined };
          throw error;
        });
        await toolsets.save({ name, ...(owner ? { owner } : {}), description: options.description, tools: resolved.ids });
        return resolved.ids;
      });
      if (options.json) printJson({ saved: name, description: options.description ?? null, tools: ids });
      else printLines(`Saved toolset '${name}' with ${ids.length} tool${ids.length === 1 ? '' : 's'}.`);
    });

  toolset
    .command('delete')
    .description('delete a saved toolset')
    .argument('<name>', 'toolset name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      writableToolsetName(name, 'delete');
      const forgotten = await withCommandStore(storeUrl, logger, async (store) => {
        const { toolsets, remembered } = toolsetPlaces(paths, store);
        if (!(await toolsets.delete(name))) await toolsets.get(name); // throws TOOLSET_NOT_FOUND listing the saved ones
        return remembered.forget(name);
      });
      if (options.json) printJson({ deleted: name, forgotten });
      else printLines(`Deleted toolset '${name}'${forgotten ? ' (it will no longer be equipped at start)' : ''}.`);
    });

  toolset
    .command('equip')
    .description('equip a toolset at the next "loadout serve" start ("all" for every tool)')
    .argument('<name>', 'toolset name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      await withCommandStore(storeUrl, logger, async (store) => {
        const { toolsets, remembered } = toolsetPlaces(paths, store);
        if (toolsetName(name) !== ALL_TOOLSET) await toolsets.get(name);
        await remembered.set(name);
      });
      if (options.json) printJson({ equipAtStart: name });
      else
        printLines(
          `'${name}' will be equipped when "loadout serve" next starts. Running gateways keep their current toolset (an agent can switch with equip-toolset).`,
        );
    });

  toolset
    .command('unequip')
    .description('undo "toolset equip": the next "loadout serve" starts with the meta-tools alone')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const was = await withCommandStore(storeUrl, logger, async (store) => {
        const { remembered } = toolsetPlaces(paths, store);
        const name = await remembered.read();
        if (name !== null) await remembered.forget(name);
        return name;
      });
      if (options.json) printJson({ unequipped: was });
      else if (was === null) printLines('No toolset is equipped at start; "loadout serve" starts with the meta-tools alone.');
      else
        printLines(
          `'${was}' will no longer be equipped when "loadout serve" next starts: it starts with the meta-tools alone. Running gateways keep their current toolset (an agent can take it off with unequip-toolset).`,
        );
    });
}

// Who saved a toolset: for everyone, or a caller's subject (a static token's is its hash) and principal id.
function ownerText(owner: ToolsetOwner | undefined): string {
  if (!owner) return 'everyone';
  return owner.subject === owner.id ? `token ${owner.id}` : `${owner.subject} (${owner.id})`;
}

function toolStatus(view: ConfigView, id: string): string {
  const tool = view.catalog.get(id);
  if (!tool) return 'unknown (stale or not discovered)';
  if (!tool.enabled) return unusableReason(tool);
  return tool.changed ? 'available, changed upstream' : 'available';
}

/** The toolset equipped at the next start, wherever it is remembered. */
interface RememberedToolset {
  read(): Promise<string | null>;
  set(name: string): Promise<void>;
  /** Forget it if it is `name`; true when it was. */
  forget(name: string): Promise<boolean>;
}

// Saved toolsets and the remembered one: the config dir's files and state.json, or the team store.
function toolsetPlaces(paths: LoadoutPaths, store: TeamStore | undefined): { toolsets: Toolsets; remembered: RememberedToolset } {
  if (store) {
    return {
      toolsets: new StoredToolsets(store.toolsets),
      remembered: {
        read: async () => (await store.equipped.get(LAST_STOP_KEY))?.value.toolset ?? null,
        set: async (name) => void (await store.equipped.put(LAST_STOP_KEY, { toolset: name })),
        forget: async (name) => {
          let forgot = false;
          await store.equipped.update(LAST_STOP_KEY, (current) => {
            forgot = current?.toolset === name;
            return forgot ? { toolset: null } : current;
          });
          return forgot;
        },
      },
    };
  }
  const state = new StateStore(paths.stateFile);
  return {
    toolsets: new ToolsetStore(paths.toolsetsDir),
    remembered: {
      read: async () => (await state.read()).activeToolset,
      set: async (name) => void (await state.update((current) => ({ ...current, activeToolset: name }))),
      forget: async (name) => {
        if ((await state.read()).activeToolset !== name) return false;
        await state.update((current) => ({ ...current, activeToolset: current.activeToolset === name ? null : current.activeToolset }));
        return true;
      },
    },
  };
}
