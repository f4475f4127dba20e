// config: loadout's files and their schemas — servers.yaml, toolset file shapes, state.json,
// paths, env expansion and safe (atomic, locked) writes. Knows nothing of MCP connections.
export {
  ServerNameSchema,
  ToolsetNameSchema,
  ToolSettingSchema,
  TransportTypeSchema,
  ServerConfigSchema,
  GatewaySettingsSchema,
  ServersFileSchema,
  EmbeddingsSettingsSchema,
  SearchSettingsSchema,
  ToolsetSchema,
  ToolRefSchema,
  transportOf,
  oauthSettingsOf,
  OAuthSettingsSchema,
  type OAuthSettings,
  type ToolSetting,
  type TransportType,
  type ServerConfig,
  type GatewaySettings,
  type ServersFile,
  type EmbeddingsSettings,
  type SearchSettings,
  type Toolset,
} from './schema.js';
export { resolvePaths, claimDataDir, DATA_DIR_OWNER_FILE, type LoadoutPaths } from './paths.js';
export { expandEnv, expandEnvRecord, unsetEnvReferences } from './envExpand.js';
export { OAuthRecordSchema, oauthRecordFile, readOAuthRecord, updateOAuthRecord, deleteOAuthRecord, type OAuthRecord } from './oauthStore.js';
export { loadServersFile, parseServersFile, updateServersFile, type LoadedServersFile } from './serversFile.js';
export { StateStore, StateSchema, type State } from './stateStore.js';
export { withFileLock, readTextIfExists, writeTextAtomic, updateTextFile } from './safeWrite.js';
export { mergeDiscoveredTools, isEmptyMergeReport, type DiscoveredTool, type ToolMergeReport, type ToolMergeOptions } from './toolMerge.js';
export { ServersFileWatcher, type ServersFileWatcherOptions } from './serversFileWatcher.js';
export { defaultImportSources, collectImports, convertServer, safeServerName, readMcpServers, importedServersYaml, createServersFile, type ImportSource, type ImportResult } from './mcpImport.js';
export { loadServersConfig } from './serversFileCache.js';
export {
  MAX_CANDIDATE_CHARS,
  CANONICAL_CANDIDATE_ID,
  CanonicalToolSchema,
  ToolCandidateSchema,
  PromptCategorySchema,
  GoldenPromptSchema,
  PromptInputSchema,
  EvalResultSchema,
  EvalResultInputSchema,
  EvalRunSchema,
  MetricsSchema,
  PromotedToolSchema,
  ServerOptimizationSchema,
  OptimizationStateSchema,
  ThresholdsSchema,
  BackendKindSchema,
  OptimizationSettingsSchema,
  type CanonicalTool,
  type ToolCandidate,
  type PromptCategory,
  type GoldenPrompt,
  type PromptInput,
  type EvalResult,
  type EvalResultInput,
  type EvalRun,
  type Metrics,
  type PromotedTool,
  type ServerOptimization,
  type OptimizationState,
  type Thresholds,
  type BackendKind,
  type OptimizationSettings,
} from './optimizationState.js';
