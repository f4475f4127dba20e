// Changed-tool approvals in store mode (`--store`): servers.yaml is configuration there, read by
// every replica and written by none, so the approved fingerprint of each tool is kept beside its
// server's definitions in the store's catalog record (`approved`), where every replica reads it
// and hears it change. A tool seen for the first time is approved as it is (as a first discovery
// writes its hash into servers.yaml); a changed one keeps its old approval until accepted.
import type { ServerConfig, ToolMergeReport } from '../config/index.js';
import type { CachedServerTools } from './definitionCache.js';
import { toolHash } from './toolHash.js';

/** The approved fingerprint of a tool: the store's approval, else the `hash` servers.yaml holds, if any. */
export function approvedHash(
  entry: Pick<CachedServerTools, 'approved'>,
  config: ServerConfig | undefined,
  tool: string,
): string | undefined {
  return entry.approved?.[tool] ?? config?.tools?.[tool]?.hash;
}

/**
 * `entry` with an approval for every listed tool that has none, and, with `acceptChanged`, the
 * current fingerprint of every changed one; what changed and what was accepted, as a merge
 * report. `entry` itself is not changed.
 */
export function withApprovals(
  server: string,
  entry: CachedServerTools,
  config: ServerConfig | undefined,
  acceptChanged: boolean,
): { entry: CachedServerTools; report: ToolMergeReport } {
  const report: ToolMergeReport = { server, added: [], stale: [], returned: [], changed: [], accepted: [] };
  const approved = { ...entry.approved };
  for (const tool of entry.tools) {
    const hash = toolHash(tool);
    const before = approvedHash(entry, config, tool.name);
    if (before === undefined) {
      approved[tool.name] = hash;
      report.added.push(tool.name);
    } else if (before !== hash) {
      report.changed.push(tool.name);
      if (acceptChanged) {
        approved[tool.name] = hash;
        report.accepted.push(tool.name);
      }
    }
  }
  return { entry: { ...entry, approved }, report };
}
