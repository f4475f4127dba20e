// catalog: every known downstream tool (from the definition cache and discovery), the
// switchboard's enabled flags, promoted descriptions, and full-text search over them.
export { Catalog, parseToolId, type CatalogTool } from './catalog.js';
export { CatalogStore, type DiscoveryResult } from './catalogStore.js';
export { readDefinitionCache, writeDefinitionCache, type CachedServerTools, type DefinitionCache } from './definitionCache.js';
