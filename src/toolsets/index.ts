// toolsets: saved, named lists of `server.tool` ids, stored as YAML files the agent, the human
// and git can all edit, or, in store mode, as records of the team store.
export { ToolsetStore } from './toolsetStore.js';
export { ALL_TOOLSET, toolsetName, writableToolsetName, type Toolsets, type ToolsetProblem } from './toolsetRules.js';
export { StoredToolsets } from './storedToolsets.js';
export { resolveToolsetTools } from './toolsetContents.js';
export { OwnedToolsets, type ToolsetViewer } from './ownedToolsets.js';
