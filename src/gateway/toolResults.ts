// The tools/call results loadout writes itself (meta-tool answers, forwarding failures): plain
// text, one JSON object as text, or an isError text the agent can act on.
import type { CallToolResult } from '@modelcontextprotocol/server';

/** A plain text result. */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

/** One JSON object as text, the answer shape of the optimization tools. */
export function jsonResult(value: unknown): CallToolResult {
  return textResult(JSON.stringify(value));
}

/** An error result the agent can act on. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
