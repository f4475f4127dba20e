// Relays a downstream server's sampling or elicitation request, made during a forwarded call, to
// the client session that made the call — only when that client declared the capability (and the
// elicitation mode); otherwise the downstream gets a clear error. Which session a request belongs
// to is decided in the downstream layer (InFlightCallers); this file only talks to the client.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { DownstreamCaller, RelayedRequest } from '../downstream/index.js';
import type { Route } from '../registry/index.js';
import type { ClientCall } from './forward.js';

// The client's answer goes back to the downstream untouched; the downstream's SDK validates it.
const LooseResultSchema = z.looseObject({});

// A person may take a while to answer an elicitation; the downstream's own timeout (and its
// cancellation, which aborts `signal`) is what really bounds the wait.
const RELAY_TIMEOUT_MS = 30 * 60_000;

/** The caller record for one forwarded call made by the client session behind `server`. */
export function downstreamCallerFor(server: Server, route: Route, call: ClientCall): DownstreamCaller {
  return {
    owner: server,
    async relay(request, signal) {
      const missing = missingCapability(server.getClientCapabilities(), request);
      if (missing) {
        throw new McpError(
          ErrorCode.InvalidRequest,
          `loadout cannot relay ${request.method} from ${route.id}: the client that called it did not declare ${missing}`,
        );
      }
      // relatedRequestId puts the request on the call's own response stream (streamable HTTP).
      return server.request(request, LooseResultSchema, {
        relatedRequestId: call.requestId,
        signal: AbortSignal.any([signal, call.cancellation.signal]),
        timeout: RELAY_TIMEOUT_MS,
      });
    },
  };
}

function missingCapability(capabilities: ClientCapabilities | undefined, request: RelayedRequest): string | undefined {
  if (request.method === 'sampling/createMessage') {
    if (!capabilities?.sampling) return 'the sampling capability';
    const usesTools = request.params.tools !== undefined || request.params.toolChoice !== undefined;
    return usesTools && !capabilities.sampling.tools ? 'sampling with tools (capabilities.sampling.tools)' : undefined;
  }
  if (!capabilities?.elicitation) return 'the elicitation capability';
  const mode = request.params.mode ?? 'form';
  const declared = capabilities.elicitation as { form?: object; url?: object };
  // An empty elicitation capability means form mode (the spec's backwards-compatible reading).
  const supportsForm = declared.form !== undefined || declared.url === undefined;
  if (mode === 'url' && !declared.url) return 'URL-mode elicitation (capabilities.elicitation.url)';
  return mode === 'form' && !supportsForm ? 'form-mode elicitation (capabilities.elicitation.form)' : undefined;
}
