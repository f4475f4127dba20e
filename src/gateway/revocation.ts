// What a new policy takes from a session already running: lists and calls follow it by reading
// it (policyViews.ts), but resource subscriptions and tasks were granted once and then kept. This
// ends those the caller may no longer use, and tells a 2025 session what ended.
import { errorMessage } from '../shared/index.js';
import type { GatewayContext } from './context.js';
import type { HubMember } from './sessionHub.js';

/**
 * End what each new policy no longer grants `member` (a session, or a shared set); returns the
 * stop. A subscription is released as an unsubscribe would be (the downstream one ends with its
 * last holder); a task becomes an unknown id and is cancelled downstream, since nobody can read
 * its result any more. The warning names only what the session itself subscribed to or started;
 * a 2026-07-28 session has no channel for it (SessionHub.announceTo).
 */
export function followRevocations(context: GatewayContext, member: HubMember): () => void {
  // A principal's view announces a new policy as a new catalog (policyViews.ts); the check is cheap
  // enough to run on every new catalog, and what it reads changes only with the policy.
  return context.catalog.onChange(() => revoke(context, member));
}

function revoke(context: GatewayContext, member: HubMember): void {
  const grants = context.grants;
  if (!grants) return;
  const resources = context.hub.endSubscriptions(member, (target) => !grants.resources(target.server));
  const tasks = context.tasks.hideWhere(member, (server, tool) => !grants.tool(server, tool));
  for (const task of tasks) {
    // A server that is not running has no task running either; starting it to cancel would be waste.
    if (!context.pool.isConnected(task.server)) continue;
    // With the caller's id, as its own task requests go: a per-user server's task lives on its connection.
    const options = { principal: context.principal.id };
    context.pool.request(task.server, 'tasks/cancel', { taskId: task.taskId }, options).catch((error: unknown) => {
      // A task that had already finished cannot be cancelled: nothing is lost.
      context.logger.debug({ mod: 'gateway', server: task.server, err: errorMessage(error) }, 'tasks/cancel of a revoked task failed');
    });
  }
  if (!resources.length && !tasks.length) return;
  const ended = [
    ...(resources.length ? [`subscriptions to ${resources.join(', ')} ended`] : []),
    ...(tasks.length ? [`tasks ${tasks.map((task) => `${task.id} (${task.server}.${task.tool})`).join(', ')} cancelled`] : []),
  ];
  context.hub.announceTo(member, 'warning', {
    message: `The policy no longer grants what these used: ${ended.join('; ')}.`,
    resources,
    tasks: tasks.map((task) => ({ taskId: task.id, tool: `${task.server}.${task.tool}` })),
  });
}
