// registry: the exposed-tool set of a session — flattened names, the lock-serialized snapshot,
// and the routing map from exposed name to (server, tool).
export { ToolRegistry, exposedDefinition, type Route, type Selection, type RegistrySnapshot, type RegistryChange, type RegistrySource, type NamingOptions, type WithheldTool, type WithheldReason } from './registry.js';
export { flattenToolName, assignExposedNames, nameBudget, CLIENT_TOOL_NAME_LIMIT } from './flatten.js';
export { resolveCatalogName } from './callNames.js';
export type { PromptRoute } from './exposedPrompts.js';
