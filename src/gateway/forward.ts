// Forwarding one call to a downstream tool: arguments unchanged, result unchanged, progress
// and cancellation passed through; a downstream failure becomes an isError result naming the
// server and the cause, so the gateway stays up.
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServerPool } from '../downstream/index.js';
import type { Route } from '../registry/index.js';
import { errorMessage, isLoadoutError } from '../shared/index.js';
import { errorResult, type RequestExtra } from './metaTools/metaTool.js';

/** Call `route` with `args` on behalf of the client request described by `extra`. */
export async function forwardCall(pool: ServerPool, route: Route, args: Record<string, unknown> | undefined, extra: RequestExtra): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  // Progress is relayed in order, and all of it before the result: a client drops progress
  // that arrives after the response.
  let progressRelayed = Promise.resolve();
  try {
    const result = await pool.callTool(route.server, route.tool, args, {
      signal: extra.signal,
      onProgress:
        progressToken === undefined
          ? undefined
          : (progress) => {
              // The downstream used our token; the client must see its own.
              const notification = { method: 'notifications/progress' as const, params: { ...progress, progressToken } };
              progressRelayed = progressRelayed.then(() => extra.sendNotification(notification)).catch(() => undefined);
            },
    });
    await progressRelayed;
    return result;
  } catch (error) {
    return errorResult(describeCallFailure(pool, route, error));
  }
}

function describeCallFailure(pool: ServerPool, route: Route, error: unknown): string {
  if (isLoadoutError(error)) return `${error.message}. The call to ${route.id} was not made.`;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    const seconds = pool.config(route.server)?.timeout_seconds;
    return `Server '${route.server}' did not answer ${route.id} within ${seconds} s (timeout_seconds in servers.yaml); try again or raise the timeout.`;
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    return `Server '${route.server}' closed the connection during ${route.id} (it may have crashed); the next call restarts it.`;
  }
  return `Server '${route.server}' failed on ${route.id}: ${errorMessage(error)}`;
}
