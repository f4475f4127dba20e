// catalog: every known downstream tool (from the definition cache and discovery), the
// switchboard's enabled flags, promoted descriptions, and full-text search over them.
export { Catalog, parseToolId, unusableReason, type CatalogTool } from './catalog.js';
export { CatalogStore, type DiscoveryResult } from './catalogStore.js';
export { readDefinitionCache, writeDefinitionCache, type CachedServerTools, type DefinitionCache } from './definitionCache.js';
export { CatalogSearch, MAX_QUERY_WORDS, type SearchOptions, type SearchResult, type SearchSetup, type RankedTool, type FusionSettings } from './search.js';
export { loadWordVectors, WordVectors, defaultWordVectorFile } from './wordVectors.js';
export { recordDiscoveredTools } from './switchboard.js';
export { toolHash, summaryOf } from './toolHash.js';
export { LearnedWordsStore, type LearnedWordsLimits } from './learnedWords.js';
export { SearchLearning } from './searchLearning.js';
export { keywordsOf, readSynonyms, examplesByTool } from './searchVocabulary.js';
export { ExampleRequestsStore } from './exampleRequests.js';
export { EmbeddingRanking } from './embeddingRanking.js';
export { ResourceUriIndex, prefixedResourceUri, type ResourceTarget } from './resourceUris.js';
