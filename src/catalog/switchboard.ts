// Records discovery results in the servers.yaml switchboard: one locked re-read + smart merge +
// atomic write for all servers at once. Never writes while the file is invalid (the update throws),
// but for an invalid server entry, which is left as it is.
import type { Tool } from '@modelcontextprotocol/server';
import { mergeDiscoveredTools, updateServersFile, type ServersFile, type ToolMergeOptions, type ToolMergeReport } from '../config/index.js';
import { summaryOf, toolHash } from './toolHash.js';

/** Result of recording discoveries: the config as written and what changed per server. */
interface SwitchboardUpdate {
  config: ServersFile;
  reports: Map<string, ToolMergeReport>;
}

/** Merge each server's discovered tools into servers.yaml, writing the file once. */
export async function recordDiscoveredTools(
  serversFile: string,
  found: Readonly<Record<string, readonly Tool[]>>,
  options: ToolMergeOptions = {},
): Promise<SwitchboardUpdate> {
  const reports = new Map<string, ToolMergeReport>();
  // An invalid entry (one typo) stays as the user wrote it, reported where the config is read:
  // the other servers' tools are recorded still.
  const config = await updateServersFile(
    serversFile,
    (document, valid) => {
      for (const [server, tools] of Object.entries(found)) {
        if (!valid.servers[server]) continue;
        const discovered = tools.map((tool) => ({ name: tool.name, description: summaryOf(tool), hash: toolHash(tool) }));
        const report = mergeDiscoveredTools(document, server, discovered, options);
        if (report) reports.set(server, report);
      }
    },
    { skipBrokenServers: true },
  );
  return { config, reports };
}
