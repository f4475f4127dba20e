// toolsets: saved, named lists of `server.tool` ids, stored as YAML files the agent, the human
// and git can all edit.
export { ToolsetStore, ALL_TOOLSET, toolsetName, writableToolsetName } from './toolsetStore.js';
export { resolveToolsetTools } from './toolsetContents.js';
