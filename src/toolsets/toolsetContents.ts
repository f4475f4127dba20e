// Checking the tool names a toolset is built from, for every way of building one (the
// build-toolset meta-tool, `loadout toolset create`): one set of rules, one wording.
import { APP_ONLY_REASON, isAppOnly, unusableReason, type Catalog } from '../catalog/index.js';
import { resolveCatalogName, type NamingOptions } from '../registry/index.js';

/** Tool ids to save, in first-seen order without repeats, and what is wrong with the other names. */
interface ToolsetContents {
  ids: string[];
  problems: string[];
}

/** Resolve namespaced or flattened names against the catalog; unknown and disabled tools are problems. */
export function resolveToolsetTools(catalog: Catalog, names: readonly string[], naming: NamingOptions): ToolsetContents {
  // A Set keeps first-seen order and drops repeats without a quadratic scan of 1,000 names.
  const ids = new Set<string>();
  const problems: string[] = [];
  for (const name of names) {
    const tool = resolveCatalogName(catalog, name, naming);
    if (!tool) {
      const close = catalog.suggest(name, 3);
      problems.push(`'${name}' is not in the catalog${close.length ? ` (did you mean ${close.join(', ')}?)` : ''}`);
    } else if (!tool.enabled) {
      problems.push(`'${tool.id}' is ${unusableReason(tool)}`);
    } else if (isAppOnly(tool.definition)) {
      // Only its App's View calls it, and the View has it whenever its server's UI tool is equipped.
      problems.push(`'${tool.id}' is ${APP_ONLY_REASON}`);
    } else {
      ids.add(tool.id);
    }
  }
  return { ids: [...ids], problems };
}
