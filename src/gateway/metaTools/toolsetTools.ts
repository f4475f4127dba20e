// Meta-tools that manage saved toolsets and what this session has equipped.
import * as z from 'zod';
import { ToolRefSchema, ToolsetNameSchema } from '../../config/index.js';
import { APP_ONLY_REASON, parseToolId, unusableReason } from '../../catalog/index.js';
import { type RegistrySnapshot, type WithheldReason, type WithheldTool } from '../../registry/index.js';
import { LoadoutError, isLoadoutError } from '../../shared/index.js';
import { ALL_TOOLSET, resolveToolsetTools, writableToolsetName } from '../../toolsets/index.js';
import { DELETES, READS_ONLY, SAVES, defineMetaTool } from './metaTool.js';
import { creditSearch } from './searchFeedback.js';
import type { GatewayContext } from '../context.js';
import { LOADOUT_ATTR } from '../../telemetry/index.js';

// The rule said in words too: some clients drop `pattern` from the schemas they show a model (Codex CLI does).
const TOOLSET_NAME = ToolsetNameSchema.describe('a-z, 0-9, "_" and "-" (at most 64), starting with a letter or digit');

const REASON_TEXT: Record<WithheldReason, (server: string) => string> = {
  unknown: () => 'not in the catalog (stale or never discovered)',
  disabled: () => 'disabled in servers.yaml',
  changed: (server) => unusableReason({ server, blocked: true }),
  unavailable: () => 'server down',
  'app-only': () => APP_ONLY_REASON,
};

function withheldText(held: WithheldTool): string {
  return REASON_TEXT[held.reason](parseToolId(held.id)?.server ?? held.id);
}

/** build-toolset: save (create or overwrite) a named list of catalog tools. */
export const buildToolset = defineMetaTool({
  name: 'build-toolset',
  annotations: SAVES,
  changesState: true,
  description: 'Save (or overwrite) a named toolset of server.tool names; equip:true also equips it.',
  input: z.strictObject({
    name: TOOLSET_NAME,
    // "server.tool" (or a flattened name), or a toolset file's objects {namespacedName} / {server, tool}.
    tools: z.array(z.union([z.string().min(1), ToolRefSchema])).min(1, 'list at least one tool'),
    description: z.string().max(500).optional(),
    equip: z.boolean().default(false),
  }),
  example: { name: 'notes', tools: ['memory.create_entities', 'memory.read_graph'], description: 'Knowledge graph', equip: true },
  async run(args, { gateway, session }) {
    writableToolsetName(args.name, 'save');
    await gateway.ready();
    const { ids, problems } = resolveToolsetTools(gateway.catalog.current, args.tools, gateway.naming);
    if (problems.length)
      throw new LoadoutError(
        'TOOL_NOT_FOUND',
        `Toolset '${args.name}' not saved: ${problems.join('; ')}. Find names with discover-all-tools.`,
      );
    await gateway.toolsets.save({ name: args.name, description: args.description, tools: ids });
    gateway.telemetry.noteMetaTool({ [LOADOUT_ATTR.toolset]: args.name, [LOADOUT_ATTR.toolCount]: ids.length });
    await creditSearch(gateway, session.searcher, ids);
    const saved = `Saved toolset '${args.name}' with ${ids.length} tool${ids.length === 1 ? '' : 's'}.`;
    if (!args.equip) return `${saved} Equip it with equip-toolset {"name": "${args.name}"}.`;
    const change = await session.equip(args.name).catch((error: unknown) => {
      // The toolset is saved whatever the equip says (a fixed /mcp/toolsets/NAME endpoint refuses it).
      if (!isLoadoutError(error)) throw error;
      throw new LoadoutError(error.code, `${saved} Not equipped: ${error.message}`, { cause: error, remedy: error.remedy });
    });
    return `${saved}\n${describeEquipped(change.snapshot, gateway, session.equippedToolsUnlisted)}`;
  },
});

/** equip-toolset: expose a saved toolset's tools under flattened names. */
export const equipToolset = defineMetaTool({
  name: 'equip-toolset',
  annotations: SAVES,
  changesState: true,
  description: 'Expose a saved toolset\'s tools as your own, replacing any equipped set ("all": every tool).',
  input: z.strictObject({ name: TOOLSET_NAME }),
  example: { name: 'notes' },
  async run(args, { gateway, session }) {
    await gateway.ready();
    const change = await session.equip(args.name);
    gateway.telemetry.noteMetaTool({ [LOADOUT_ATTR.toolset]: args.name, [LOADOUT_ATTR.toolCount]: change.snapshot.routes.size });
    // Equipping everything says nothing about which tool a search was for.
    if (args.name !== ALL_TOOLSET)
      await creditSearch(
        gateway,
        session.searcher,
        [...change.snapshot.routes.values()].map((route) => route.id),
      );
    return describeEquipped(change.snapshot, gateway, session.equippedToolsUnlisted);
  },
});

/** unequip-toolset: withdraw the equipped tools. */
export const unequipToolset = defineMetaTool({
  name: 'unequip-toolset',
  annotations: SAVES,
  changesState: true,
  description: 'Withdraw the equipped tools.',
  input: z.strictObject({}),
  example: {},
  async run(_args, { session }) {
    const before = session.snapshot.selection;
    if (!before) return 'No toolset is equipped.';
    await session.unequip();
    return `Unequipped '${before.toolset}'; only loadout's own tools remain.`;
  },
});

/** list-saved-toolsets: what can be equipped. */
export const listSavedToolsets = defineMetaTool({
  name: 'list-saved-toolsets',
  annotations: READS_ONLY,
  description: 'List saved toolsets; marks the equipped one.',
  input: z.strictObject({}),
  example: {},
  async run(_args, { gateway, session }) {
    const { toolsets, problems } = await gateway.toolsets.list();
    const equipped = session.snapshot.selection?.toolset;
    const lines = toolsets.map((t) => {
      // Only the tools the caller may use are counted: a raw count would tell that hidden ones exist.
      const count = t.tools.filter((id) => !gateway.hiddenByPolicy(id)).length;
      return `${t.name === equipped ? '* ' : ''}${t.name} (${count} tool${count === 1 ? '' : 's'})${t.description ? ` — ${t.description}` : ''}`;
    });
    for (const problem of problems) lines.push(`! ${problem.error}`);
    if (!toolsets.length) lines.unshift('No saved toolsets yet. Create one with build-toolset.');
    else lines.unshift(`${toolsets.length} saved toolset${toolsets.length === 1 ? '' : 's'}${equipped ? ' (* = equipped)' : ''}:`);
    return lines.join('\n');
  },
});

/** get-active-toolset: the equipped toolset and each tool's status. */
export const getActiveToolset = defineMetaTool({
  name: 'get-active-toolset',
  annotations: READS_ONLY,
  description: "Show the equipped toolset and each tool's status.",
  input: z.strictObject({}),
  example: {},
  async run(_args, { gateway, session }) {
    const snapshot = await session.settledSnapshot();
    if (!snapshot.selection) return 'No toolset is equipped. See list-saved-toolsets, then equip-toolset.';
    const catalog = gateway.catalog.current;
    // A tool whose definition differs from the approved hash in servers.yaml ("rug pull" check).
    const changed = (id: string): string => (catalog.get(id)?.changed ? ', changed upstream since approved' : '');
    const withheld = shownWithheld(snapshot, gateway);
    const lines = [`Equipped: '${snapshot.selection.toolset}' (${snapshot.routes.size} available, ${withheld.length} not).`];
    for (const [name, route] of snapshot.routes) lines.push(`${route.id} → ${name}: available${changed(route.id)}`);
    for (const held of withheld) lines.push(`${held.id}: ${withheldText(held)}${held.reason === 'changed' ? '' : changed(held.id)}`);
    return lines.join('\n');
  },
});

/** delete-toolset: remove a saved toolset, unequipping it first if equipped. */
export const deleteToolset = defineMetaTool({
  name: 'delete-toolset',
  annotations: DELETES,
  changesState: true,
  description: 'Delete a saved toolset (unequips it if equipped).',
  input: z.strictObject({ name: TOOLSET_NAME }),
  example: { name: 'notes' },
  async run(args, { gateway, session }) {
    writableToolsetName(args.name, 'delete');
    const existed = await gateway.toolsets.delete(args.name);
    if (!existed) await gateway.toolsets.get(args.name); // throws TOOLSET_NOT_FOUND listing the saved ones
    // Checked after the file is gone, so an equip of it that finished meanwhile is undone too.
    const wasEquipped = session.snapshot.selection?.toolset === args.name;
    if (wasEquipped) await session.unequip();
    return `Deleted toolset '${args.name}'${wasEquipped ? ' and unequipped it' : ''}.`;
  },
});

// The withheld tools the caller may know of: one `policy:` hides is not named (a toolset shared
// with the caller may hold tools it is not granted).
function shownWithheld(snapshot: RegistrySnapshot, gateway: Pick<GatewayContext, 'hiddenByPolicy'>): WithheldTool[] {
  return snapshot.withheld.filter((held) => !gateway.hiddenByPolicy(held.id));
}

function describeEquipped(snapshot: RegistrySnapshot, gateway: Pick<GatewayContext, 'hiddenByPolicy'>, unlisted = false): string {
  const names = [...snapshot.routes.keys()];
  const lines = [
    `Equipped '${snapshot.selection?.toolset}': ${names.length} tool${names.length === 1 ? '' : 's'}${names.length ? `: ${names.join(', ')}` : ''}.`,
  ];
  for (const held of shownWithheld(snapshot, gateway)) lines.push(`Not exposed: ${held.id} (${withheldText(held)}).`);
  if (names.length && unlisted)
    lines.push('Your client does not re-read its tool list, so call them with call-tool {"tool": "<name>", "arguments": {…}}.');
  else if (names.length)
    lines.push('If they do not appear in your tool list, call them with call-tool {"tool": "<name>", "arguments": {…}}.');
  return lines.join('\n');
}
