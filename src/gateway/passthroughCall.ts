// Registers the client-facing tools/call handler without the SDK Server's tools/call wrapper.
// That wrapper parses every request a second time and re-validates every result against the
// SDK's CallToolResultSchema, returning a parsed copy: it strips fields its content schemas do
// not know (a newer server's additions) and turns a result it cannot parse into an error. A
// gateway forwards results untouched, and the copy costs time on every forwarded call.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra } from './forward.js';

/** Answer tools/call on `server` with `handler`; the request is still parsed once (by Protocol). */
export function setPassthroughCallToolHandler(
  server: Server,
  handler: (request: CallToolRequest, extra: RequestExtra) => Promise<CallToolResult>,
): void {
  Protocol.prototype.setRequestHandler.call(server, CallToolRequestSchema, handler);
}
