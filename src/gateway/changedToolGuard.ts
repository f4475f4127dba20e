// The last check before a call leaves for a downstream: with `block_changed_tools`, a tool whose
// definition changed upstream is refused, even on the call that starts its server (the change is
// only seen once the started server lists its tools, which must happen before the call, not after).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { unusableReason } from '../catalog/index.js';
import type { Route } from '../registry/index.js';
import type { GatewayContext } from './context.js';
import { forwardToolCall, type ClientRequest } from './forward.js';
import { errorResult } from './toolResults.js';

/** Forward `route`, unless changed tools are blocked and this one changed upstream. */
export function forwardUnlessChanged(
  context: Pick<GatewayContext, 'settings' | 'pool' | 'catalog'>,
  route: Route,
  args: Record<string, unknown> | undefined,
  call: ClientRequest,
): Promise<CallToolResult> {
  // The hot path (blocking off, or the server running with its tools re-listed) adds no await.
  if (!context.settings.block_changed_tools) return forwardToolCall(context.pool, route, args, call);
  return (async () => {
    // A server that fails to start is reported by forwardCall, which tries again.
    await context.catalog.confirmBeforeCall(route.server).catch(() => undefined);
    const tool = context.catalog.current.get(route.id);
    if (tool?.blocked) return errorResult(`${route.id} ${unusableReason(tool)}. The call was not made.`);
    return forwardToolCall(context.pool, route, args, call);
  })();
}
