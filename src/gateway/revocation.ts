// What a new policy takes from a session that is already running. Lists, calls and reads follow the
// policy by reading it (policyViews.ts), but two things were granted once and then kept: resource
// subscriptions (2025 resources/subscribe, 2026-07-28 listen streams) and tasks. On each new
// policy, those of a server or tool the session's principal may no longer use end: the
// subscription is released as an unsubscribe would (no more updates; the downstream one ends with
// its last holder), and the task becomes an unknown id, cancelled downstream since nobody can ever
// read its result. A 2025 session is told what ended in one warning naming only what it had itself
// subscribed to or called; a 2026-07-28 session has no channel for it (see SessionHub.announceTo).
import { errorMessage } from '../shared/index.js';
import type { GatewayContext } from './context.js';
import type { HubMember } from './sessionHub.js';

/** End what each new policy no longer grants `member` (a session, or a shared set); returns the stop. */
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
    context.pool.request(task.server, 'tasks/cancel', { taskId: task.taskId }).catch((error: unknown) => {
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
