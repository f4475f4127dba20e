// Resolving a name an agent passes to call-tool: an exposed (flattened) name, a namespaced
// `server.tool`, or the flattened name a catalog tool would get. Always through maps, never by
// reversing the flattening.
import type { Catalog, CatalogTool } from '../catalog/index.js';
import { assignExposedNames } from './flatten.js';
import type { NamingOptions } from './registry.js';

const flattenedIndexes = new WeakMap<Catalog, Map<string, string>>();

/** The catalog tool a name refers to (enabled or not), if any. */
export function resolveCatalogName(catalog: Catalog, name: string, naming: NamingOptions): CatalogTool | undefined {
  const direct = catalog.get(name);
  if (direct) return direct;
  let index = flattenedIndexes.get(catalog);
  if (!index) {
    const ids = catalog.visible().map((tool) => tool.id);
    const names = assignExposedNames(ids, naming.maxNameLength, naming.reservedNames);
    index = new Map([...names].map(([id, flat]) => [flat, id]));
    flattenedIndexes.set(catalog, index);
  }
  const id = index.get(name);
  return id === undefined ? undefined : catalog.get(id);
}
