// Whether a tool says it is deprecated. MCP gives a tool no field for it (its annotations are hints
// of behaviour: read-only, destructive, idempotent, open-world), so the server's own description is
// read: the marker in capitals anywhere ("… DEPRECATED: Use read_text_file instead."), or the word
// opening it however it is cased ("Deprecated: use …", "[deprecated] …"). A description that only
// speaks of deprecated things ("Lists deprecated packages") is not a deprecated tool. Its replacement
// is named in the same text, if anywhere.
import type { CatalogTool } from './catalogTool.js';

const MARKER = /\bDEPRECATED\b/;
const OPENING = /^\W*deprecated\b/i;

/** True for a tool whose server's description says it is deprecated. */
export function saysDeprecated(tool: CatalogTool): boolean {
  const description = tool.definition.description ?? '';
  return MARKER.test(description) || OPENING.test(description);
}

/** The words of a deprecated tool's description that could name its replacement (read_text_file, search-v2). */
export function replacementNamesOf(tool: CatalogTool): string[] {
  return (tool.definition.description ?? '').split(/[^\w.-]+/u).filter((word) => word && word !== tool.name);
}
