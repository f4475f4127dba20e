// The meta-tools loadout answers itself, in the order clients list them.
import { callTool, discoverAllTools } from './catalogTools.js';
import type { MetaTool } from './metaTool.js';
import { OPTIMIZATION_META_TOOLS } from './optimizationToolList.js';
import { buildToolset, deleteToolset, equipToolset, getActiveToolset, listSavedToolsets, unequipToolset } from './toolsetTools.js';

/** Every meta-tool. */
export const META_TOOLS: readonly MetaTool[] = [
  discoverAllTools,
  buildToolset,
  equipToolset,
  unequipToolset,
  listSavedToolsets,
  getActiveToolset,
  deleteToolset,
  callTool,
  ...OPTIMIZATION_META_TOOLS,
];

export { defineMetaTool, textResult, errorResult, type MetaTool, type MetaToolContext, type RequestExtra } from './metaTool.js';
