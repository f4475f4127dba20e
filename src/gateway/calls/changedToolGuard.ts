// The last check before a tools/call leaves for a downstream, plain or task-augmented (the router,
// callRouter.ts, asks it for every forwarded call): with
// `block_changed_tools`, a tool whose definition changed upstream is refused, even on the call that
// starts its server (the change is only seen once the started server lists its tools, which must
// happen before the call, not after).
import type { CallToolResult } from '@modelcontextprotocol/server';
import { unusableReason } from '../../catalog/index.js';
import type { Route } from '../../registry/index.js';
import type { GatewayContext } from '../context.js';
import { errorResult } from '../toolResults.js';

type GuardContext = Pick<GatewayContext, 'settings' | 'pool' | 'catalog'>;

/**
 * The answer refusing a call of `route` when changed tools are blocked and this one changed
 * upstream, or undefined when the call may go. The router skips it when blocking is off (no await
 * on the hot path).
 */
export async function changedToolRefusal(context: GuardContext, route: Route): Promise<CallToolResult | undefined> {
  // A server that fails to start is reported by the forward that follows, which tries again.
  await context.catalog.confirmBeforeCall(route.server).catch(() => undefined);
  const tool = context.catalog.current.get(route.id);
  return tool?.blocked ? errorResult(`${route.id} ${unusableReason(tool)}. The call was not made.`) : undefined;
}
