// config: loadout's files and their schemas — servers.yaml, toolset file shapes, state.json,
// paths, env expansion and safe (atomic, locked) writes. Knows nothing of MCP connections.
export {
  ToolsetNameSchema,
  ServerConfigSchema,
  GatewaySettingsSchema,
  ToolsetSchema,
  enabledServerNames,
  type ServerConfig,
  type GatewaySettings,
  type ServersFile,
  type Toolset,
} from './schema.js';
export { resolvePaths, type LoadoutPaths } from './paths.js';
export { expandEnv, expandEnvRecord } from './envExpand.js';
export { loadServersFile, updateServersFile } from './serversFile.js';
export { StateStore } from './stateStore.js';
export { withFileLock, readTextIfExists, writeTextAtomic, updateTextFile } from './safeWrite.js';
export { mergeDiscoveredTools, type ToolMergeReport, type ToolMergeOptions } from './toolMerge.js';
export { ServersFileWatcher } from './serversFileWatcher.js';
export { defaultImportSources, collectImports, importedServersYaml, createServersFile, type ImportSource, type ImportResult } from './mcpImport.js';
export { loadServersConfig } from './serversFileCache.js';
export {
  MAX_CANDIDATE_CHARS,
  CANONICAL_CANDIDATE_ID,
  PromptCategorySchema,
  MetricsSchema,
  ServerOptimizationSchema,
  ThresholdsSchema,
  BackendKindSchema,
  OptimizationSettingsSchema,
  type CanonicalTool,
  type ToolCandidate,
  type PromptCategory,
  type GoldenPrompt,
  type EvalRun,
  type Metrics,
  type PromotedTool,
  type ServerOptimization,
  type Thresholds,
  type BackendKind,
  type OptimizationSettings,
} from './optimizationState.js';
