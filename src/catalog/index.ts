// catalog: every known downstream tool (from the definition cache and discovery), the
// switchboard's enabled flags, promoted descriptions, and full-text search over them.
export { Catalog, parseToolId, unusableReason, type CatalogTool } from './catalog.js';
export { CatalogStore } from './catalogStore.js';
export type { DiscoveryResult } from './catalogDiscovery.js';
export { type CachedServerTools, type DefinitionCache } from './definitionCache.js';
export { readDefinitionCache, storedDefinitions, writeDefinitionCache } from './storedDefinitions.js';
export { CatalogSearch } from './search.js';
export type { SearchSetup, RankedTool, Ranking } from './searchTypes.js';
export { rank, type RankRequest } from './catalogRank.js';
export { loadWordVectors } from './wordVectors.js';
export { toolHash } from './toolHash.js';
export { keywordsOf } from './searchVocabulary.js';
export { ExampleRequestsStore } from './exampleRequests.js';
export { type ResourceTarget } from './resourceUris.js';
export { APP_ONLY_REASON, APPS_EXTENSION, isAppCallable, isAppOnly, isUiUri, uiResourceUriOf, withUiResourceUri } from './appTools.js';
export {
  formatServerMap,
  LISTED_MAP_BUDGET_BYTES,
  MAP_BUDGET_BYTES,
  serverMapOf,
  type ServerMapEntry,
  type ServerState,
} from './serverMap.js';
