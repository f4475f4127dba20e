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
    // Enabled tools get the names they are exposed under; a disabled or blocked tool gets the name
    // it would have among all tools, where no enabled tool holds it, so the caller hears why.
    const visible = assignExposedNames(
      catalog.visible().map((tool) => tool.id),
      naming.maxNameLength,
      naming.reservedNames,
    );
    const all = assignExposedNames(
      [...catalog.all()].map((tool) => tool.id),
      naming.maxNameLength,
      naming.reservedNames,
    );
    index = new Map([...visible].map(([id, flat]) => [flat, id]));
    for (const [id, flat] of all) if (!visible.has(id) && !index.has(flat)) index.set(flat, id);
    flattenedIndexes.set(catalog, index);
  }
  const id = index.get(name);
  return id === undefined ? undefined : catalog.get(id);
}
