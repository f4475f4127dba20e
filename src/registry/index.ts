// registry: the exposed-tool set of a session — flattened names, the lock-serialized snapshot,
// and the routing map from exposed name to (server, tool).
export {
  ToolRegistry,
  routeTo,
  type Route,
  type Selection,
  type RegistrySnapshot,
  type RegistryChange,
  type NamingOptions,
  type WithheldReason,
  type WithheldTool,
} from './registry.js';
export { flattenToolName, nameBudget, CLIENT_TOOL_NAME_LIMIT } from './flatten.js';
export { resolveCatalogName } from './callNames.js';
export { alwaysLoaded } from './alwaysLoad.js';
