// config: loadout's files and their schemas — servers.yaml, toolset file shapes, state.json,
// paths, env expansion and safe (atomic, locked) writes. Knows nothing of MCP connections.
export {
  ToolsetNameSchema,
  ServerConfigSchema,
  GatewaySettingsSchema,
  AllowedHostSchema,
  EmbeddingsSettingsSchema,
  ToolsetSchema,
  ToolRefSchema,
  enabledServerNames,
  oauthSettingsOf,
  type OAuthSettings,
  type ServerConfig,
  type GatewaySettings,
  type CodeModeSettings,
  type ServersFile,
  type EmbeddingsSettings,
  type Toolset,
  type ToolsetOwner,
} from './schema.js';
export {
  AuthSettingsSchema,
  LimitsSettingsSchema,
  PolicySettingsSchema,
  type AuthSettings,
  type LimitsSettings,
  type PolicySettings,
  type PolicyRule,
} from './identitySettings.js';
export { AuditSettingsSchema, type AuditSettings } from './auditSettings.js';
export { sandboxOf, sandboxText, type SandboxPolicy } from './sandboxSettings.js';
export { proposeSandbox } from './sandboxProposals.js';
export { resolvePaths, claimDataDir, type LoadoutPaths } from './paths.js';
export { expandEnv, expandEnvRecord, referencedValues, serverEnvTexts, unsetEnvReferences } from './envExpand.js';
export {
  OAuthRecordSchema,
  oauthRecordFile,
  readOAuthRecord,
  readOAuthFile,
  writeOAuthFile,
  updateOAuthRecord,
  deleteOAuthRecord,
  type OAuthRecord,
  type OAuthFileRead,
} from './oauthStore.js';
export { loadServersFile, updateServersFile } from './serversFile.js';
export { splitEntryText } from './commandLine.js';
export {
  invalidEntryProblem,
  serverProblems,
  serverProblemText,
  unsetVariablesOf,
  unsetVariablesProblem,
  type ServerProblem,
} from './serverProblems.js';
export { readSecretsFile, addSecrets, expansionEnv } from './secretsFile.js';
export { maskLiteralSecrets, moveLiteralSecrets, type MovedSecret, type SecretsMove } from './literalSecrets.js';
export { parseYamlFile } from './yamlFile.js';
export { parseToolsetFile, toolsetFileBody, toolsetFileText } from './toolsetFile.js';
export { catalogFileSchema, catalogFileText } from './catalogFile.js';
export { DiscoveryRecordSchema, parseDiscoveryFile, discoveryFileText, type DiscoveryRecord } from './discoveryFile.js';
export { ClientRecordSchema, parseClientsFile, clientsFileText, type ClientRecord } from './clientsFile.js';
export { LearnedWordsFileSchema, learnedWordsFileText, type LearnedWordsFile } from './learnedWordsFile.js';
export { EquippedRecordSchema, equippedFileText, type EquippedRecord } from './equippedFile.js';
export { StateStore, type State } from './stateStore.js';
export {
  withFileLock,
  tryWithFileLock,
  readTextIfExists,
  writeTextAtomic,
  updateTextFile,
  fileStamp,
  ABSENT_FILE_STAMP,
} from './safeWrite.js';
export { mergeDiscoveredTools, type ToolMergeReport, type ToolMergeOptions } from './toolMerge.js';
export { ServersFileWatcher } from './serversFileWatcher.js';
export {
  defaultImportSources,
  collectImports,
  convertServer,
  startsLoadout,
  safeServerName,
  importedServersYaml,
  createServersFile,
  type ImportSource,
  type ImportResult,
} from './mcpImport.js';
export { loadServersConfig, serversFileNotice, type ServersFileProblem } from './serversFileCache.js';
export {
  MAX_CANDIDATE_CHARS,
  CANONICAL_CANDIDATE_ID,
  PromptInputSchema,
  EvalResultInputSchema,
  MetricsSchema,
  ServerOptimizationSchema,
  ThresholdsSchema,
  BackendKindSchema,
  OptimizationSettingsSchema,
  type CanonicalTool,
  type ToolCandidate,
  type PromptCategory,
  type GoldenPrompt,
  type PromptInput,
  type EvalResultInput,
  type EvalRun,
  type Metrics,
  type PromotedTool,
  type ServerOptimization,
  type Thresholds,
  type BackendKind,
  type OptimizationSettings,
} from './optimizationState.js';
