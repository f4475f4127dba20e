// The meta-tools loadout answers itself, in the order clients list them; the metaTools wing's door.
import { callTool, discoverAllTools } from './catalogTools.js';
import { runCode } from './runCode.js';
import type { GatewaySettings } from '../../config/index.js';
import { nameBudget, type NamingOptions } from '../../registry/index.js';
import type { MetaTool } from './metaTool.js';
import { OPTIMIZATION_META_TOOLS } from './optimizationToolList.js';
import { buildToolset, deleteToolset, equipToolset, getActiveToolset, listSavedToolsets, unequipToolset } from './toolsetTools.js';

/** The toolset meta-tools, always listed. */
export const TOOLSET_META_TOOLS: readonly MetaTool[] = [
  discoverAllTools,
  buildToolset,
  equipToolset,
  unequipToolset,
  listSavedToolsets,
  getActiveToolset,
  deleteToolset,
  callTool,
  runCode,
];

/** The meta-tools that change the equipped set: not listed where the set is fixed (/mcp/toolsets/NAME). */
export const EQUIP_META_TOOLS: ReadonlySet<MetaTool> = new Set([equipToolset, unequipToolset]);

/** Every meta-tool; the optimization ones are listed only with `optimization.expose_tools: true`. */
export const META_TOOLS: readonly MetaTool[] = [...TOOLSET_META_TOOLS, ...OPTIMIZATION_META_TOOLS];

export { OPTIMIZATION_META_TOOLS };

/** How exposed names are formed: the client's length budget, and never a meta-tool's name (listed or not). */
export function namingOptions(settings: Pick<GatewaySettings, 'client_key'>): NamingOptions {
  return { maxNameLength: nameBudget(settings.client_key), reservedNames: new Set(META_TOOLS.map((tool) => tool.name)) };
}

export { describeInvalidArguments, listedMetaTool, parseMetaToolArguments, type MetaTool, type MetaToolSession } from './metaTool.js';
export { sessionInstructions } from './catalogMap.js';
export { creditCall, creditSearch } from './searchFeedback.js';
export { withFileNotice } from './fileNotice.js';
export { unknownToolError, unroutedToolMessage } from './unknownTool.js';
