// catalog: every known downstream tool (from the definition cache and discovery), the
// switchboard's enabled flags, promoted descriptions, and full-text search over them.
export { Catalog, toolId, parseToolId, type CatalogTool, type CatalogSources } from './catalog.js';
export { CatalogStore, type CatalogStoreOptions, type DiscoverOptions, type DiscoveryResult } from './catalogStore.js';
export { readDefinitionCache, writeDefinitionCache, type CachedServerTools, type DefinitionCache } from './definitionCache.js';
export type { SearchOptions } from './search.js';
export { recordDiscoveredTools, type SwitchboardUpdate } from './switchboard.js';
export { toolHash, summaryOf } from './toolHash.js';
export { ResourceUriIndex, prefixedResourceUri, type ResourceTarget } from './resourceUris.js';
