// Registers the client-facing tools/call handler without the SDK Server's tools/call wrapper.
// That wrapper re-validates every result against the SDK's CallToolResultSchema, returning a
// parsed copy: it strips fields its content schemas do not know (a newer server's additions) and
// turns a result it cannot parse into an error. A gateway forwards results untouched. Malformed
// params get a JSON-RPC InvalidParams error that says what is wrong, not a zod issue dump.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, ErrorCode, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RequestExtra } from './metaTools/metaTool.js';

// Protocol routes on the method and parses with this; the params are checked in the handler.
const AnyCallToolRequestSchema = z.object({ method: z.literal('tools/call'), params: z.unknown() });

/** Answer tools/call on `server` with `handler`, after checking the request's params. */
export function setPassthroughCallToolHandler(server: Server, handler: (request: CallToolRequest, extra: RequestExtra) => Promise<CallToolResult>): void {
  Protocol.prototype.setRequestHandler.call(server, AnyCallToolRequestSchema, (request: unknown, extra: RequestExtra) => {
    const parsed = CallToolRequestSchema.safeParse(request);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
      // Protocol answers with the error's code and message; an McpError's message would carry the
      // "MCP error -32602:" prefix that the client's SDK adds again.
      throw Object.assign(new Error(`Invalid tools/call request: ${problems.join('; ')}`), { code: ErrorCode.InvalidParams });
    }
    return handler(parsed.data, extra);
  });
}
