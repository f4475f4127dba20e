// Forwarding one non-tool request (prompts/get, resources/read, completion/complete, …) to the
// server that owns it: params unchanged but for the name or URI the route rewrote, the raw
// result back unchanged. A failure becomes an McpError that names the server and keeps the
// downstream's error code (so a downstream resource-not-found stays -32002).
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ServerPool } from '../downstream/index.js';
import { Cancellation, errorMessage, isLoadoutError } from '../shared/index.js';
import type { RequestExtra } from './metaTools/metaTool.js';

/** Sends `method` with `params` to `server` on behalf of a client request. */
export type DownstreamRequester = (server: string, method: string, params: Record<string, unknown>, extra?: RequestExtra) => Promise<Record<string, unknown>>;

/**
 * The requester over `pool`: starts the server if needed; the client's cancellation reaches the
 * server, and the server's progress reaches the client under the client's own token.
 */
export function downstreamRequester(pool: ServerPool): DownstreamRequester {
  return async (server, method, params, extra) => {
    const progressToken = extra?._meta?.progressToken;
    try {
      return await pool.request(server, method, params, {
        cancellation: extra ? Cancellation.fromSignal(extra.signal) : undefined,
        onProgress:
          progressToken === undefined || !extra
            ? undefined
            : (progress) => void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined),
      });
    } catch (error) {
      throw downstreamFailure(pool, server, method, error);
    }
  };
}

/** The client-facing error for a failed downstream request. */
export function downstreamFailure(pool: ServerPool, server: string, method: string, error: unknown): McpError {
  if (isLoadoutError(error)) return new McpError(ErrorCode.InternalError, `${error.message}; ${method} was not sent`);
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return new McpError(error.code, `Server '${server}' did not answer ${method} within ${pool.config(server)?.timeout_seconds} s (timeout_seconds in servers.yaml)`);
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return new McpError(ErrorCode.InternalError, `Server '${server}' closed the connection during ${method} (it may have crashed); the next request restarts it`);
    }
    return new McpError(error.code, `Server '${server}': ${error.message.replace(/^MCP error -?\d+: /, '')}`, error.data);
  }
  return new McpError(ErrorCode.InternalError, `Server '${server}' failed on ${method}: ${errorMessage(error)}`);
}
