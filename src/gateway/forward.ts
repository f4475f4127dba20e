// Forwarding one call to a downstream tool: arguments unchanged, result unchanged, progress
// and cancellation passed through; a downstream failure becomes an isError result naming the
// server and the cause, so the gateway stays up.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, type CallToolResult, type ProgressToken, type RequestId, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { ServerPool } from '../downstream/index.js';
import type { Route } from '../registry/index.js';
import { Cancellation, errorMessage, isLoadoutError } from '../shared/index.js';
import { downstreamCallerFor } from './clientRelay.js';
import { errorResult, type RequestExtra } from './metaTools/metaTool.js';

/**
 * The client request a forwarded call answers, whether the SDK Server received it (clientCallOf)
 * or it was taken straight from the transport (directCalls.ts).
 */
export interface ClientCall {
  requestId: RequestId;
  cancellation: Cancellation;
  /** The client's progress token, if it asked for progress. */
  progressToken?: ProgressToken;
  sendNotification(notification: ServerNotification): Promise<void>;
}

/** The ClientCall of a request handled by the SDK Server. */
export function clientCallOf(extra: RequestExtra): ClientCall {
  return {
    requestId: extra.requestId,
    cancellation: Cancellation.fromSignal(extra.signal),
    progressToken: extra._meta?.progressToken,
    sendNotification: extra.sendNotification,
  };
}

/**
 * Call `route` with `args` on behalf of the client request `call`, made to the client-facing
 * `server` (which answers the downstream's sampling/elicitation requests).
 */
export async function forwardCall(
  pool: ServerPool,
  route: Route,
  args: Record<string, unknown> | undefined,
  call: ClientCall,
  server: Server,
): Promise<CallToolResult> {
  const { progressToken } = call;
  // Progress is sent in order and before the result: a client drops progress for a finished request.
  let progressSent = Promise.resolve();
  try {
    const result = await pool.callTool(route.server, route.tool, args, {
      cancellation: call.cancellation,
      caller: downstreamCallerFor(server, route, call),
      onProgress:
        progressToken === undefined
          ? undefined
          : (progress) => {
              // The downstream used our token; the client must see its own.
              const notification = { method: 'notifications/progress' as const, params: { ...progress, progressToken } };
              progressSent = progressSent.then(() => call.sendNotification(notification)).catch(() => undefined);
            },
    });
    await progressSent;
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
