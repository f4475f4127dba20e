// The smart merge of discovered tools into one server's `tools:` map of servers.yaml, done on the
// yaml Document so comments and key order survive. Pure: it edits the given document and reports;
// reading, locking and writing the file is the caller's job (updateServersFile).
import type { Document, YAMLMap } from 'yaml';
import { yamlModule } from '../shared/index.js';

/** A tool as discovery found it: name, one-line description, and its definition hash. */
export interface DiscoveredTool {
  name: string;
  description: string;
  hash: string;
}

/** What a merge changed for one server. */
export interface ToolMergeReport {
  server: string;
  /** New tools, added with `enabled: true`. */
  added: string[];
  /** Tools no longer offered by the server, now `stale: true` (their setting kept). */
  stale: string[];
  /** Stale tools that are back (`stale` cleared). */
  returned: string[];
  /** Tools whose schema or description differs from the approved `hash`. */
  changed: string[];
  /** Changed tools whose new hash was approved by this merge (`acceptChanged`). */
  accepted: string[];
}

/** Options of a merge. */
export interface ToolMergeOptions {
  /** Approve changed tools: store their new hash so they are no longer marked changed. */
  acceptChanged?: boolean;
}

/**
 * Merge `discovered` into `servers.<server>.tools`. New → `enabled: true` + description + hash;
 * existing → `enabled` and every user value kept, description refreshed, hash filled in if absent
 * (a differing hash is kept and reported as changed); gone → `stale: true`; back → `stale` removed.
 * Returns undefined when the server is no longer in the document (removed by a concurrent edit).
 */
export function mergeDiscoveredTools(
  document: Document,
  server: string,
  discovered: readonly DiscoveredTool[],
  options: ToolMergeOptions = {},
): ToolMergeReport | undefined {
  const { isMap } = yamlModule();
  const serverNode = document.getIn(['servers', server], true);
  if (!isMap(serverNode)) return undefined;
  const report: ToolMergeReport = { server, added: [], stale: [], returned: [], changed: [], accepted: [] };
  const existingTools = serverNode.get('tools', true);
  let toolsMap: YAMLMap;
  if (isMap(existingTools)) {
    toolsMap = existingTools;
  } else {
    toolsMap = document.createNode({});
    serverNode.set('tools', toolsMap);
  }
  const found = new Set(discovered.map((tool) => tool.name));

  for (const tool of discovered) {
    const entry = toolsMap.get(tool.name, true);
    if (!isMap(entry)) {
      // Absent, or written bare (`name:`), which means "defaults apply": both become a full entry.
      const isNew = entry === undefined && !toolsMap.has(tool.name);
      toolsMap.set(tool.name, document.createNode({ enabled: true, description: tool.description, hash: tool.hash }));
      if (isNew) report.added.push(tool.name);
      continue;
    }
    if (entry.get('stale') === true) {
      entry.delete('stale');
      report.returned.push(tool.name);
    } else if (entry.has('stale')) {
      entry.delete('stale');
    }
    if (entry.get('description') !== tool.description) entry.set('description', tool.description);
    const approvedHash = scalarText(entry.get('hash', true));
    if (approvedHash === undefined) {
      entry.set('hash', tool.hash);
    } else if (approvedHash !== tool.hash) {
      report.changed.push(tool.name);
      if (options.acceptChanged) {
        entry.set('hash', tool.hash);
        report.accepted.push(tool.name);
      }
    }
  }

  for (const item of toolsMap.items) {
    const name = scalarText(item.key);
    if (name === undefined || found.has(name)) continue;
    if (isMap(item.value)) {
      if (item.value.get('stale') === true) continue;
      item.value.set('stale', true);
    } else {
      item.value = document.createNode({ stale: true });
    }
    report.stale.push(name);
  }
  return report;
}

function scalarText(node: unknown): string | undefined {
  if (yamlModule().isScalar(node))
    return typeof node.value === 'string' || typeof node.value === 'number' || typeof node.value === 'boolean'
      ? String(node.value)
      : undefined;
  return typeof node === 'string' ? node : undefined;
}
