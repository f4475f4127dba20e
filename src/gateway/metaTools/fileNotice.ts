// What every meta-tool answer and the session's instructions say first while servers.yaml does
// not parse: that loadout runs on its last good parse (or on no servers), and why, at file:line:col.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CatalogStore } from '../../catalog/index.js';
import { serversFileNotice } from '../../config/index.js';

/** The notice line, or undefined while servers.yaml parses. */
export function fileNoticeLine(catalog: Pick<CatalogStore, 'fileProblem'>): string | undefined {
  const problem = catalog.fileProblem;
  return problem ? serversFileNotice(problem) : undefined;
}

/** `result` with the notice as its first content block (a block of its own, so a JSON answer stays parseable). */
export function withFileNotice(result: CallToolResult, catalog: Pick<CatalogStore, 'fileProblem'>): CallToolResult {
  const notice = fileNoticeLine(catalog);
  if (notice === undefined) return result;
  return { ...result, content: [{ type: 'text', text: notice }, ...(result.content ?? [])] };
}
