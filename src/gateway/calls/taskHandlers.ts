// The client-facing side of task-augmented tool calls: a tools/call with `task` is forwarded
// like any call and answers with the task under a loadout id; tasks/get, tasks/result,
// tasks/cancel and tasks/list go to the server that owns each task, through forward(), with the
// ids swapped both ways (taskRoutes.ts). Only the session that created a task can reach it.
import type { Server, ServerCapabilities } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Route } from '../../registry/index.js';
import type { GatewayContext } from '../context.js';
import { clientRequestOf, forward, toolCallTarget, type ClientRequest } from './forward.js';
import { withTaskId } from '../taskRoutes.js';

/** What loadout declares about tasks: tools/call may be task-augmented; tasks can be listed and cancelled. */
export const TASK_CAPABILITIES: ServerCapabilities = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };

/**
 * Forward a task-augmented tools/call of `route` (the router, callRouter.ts, has decided it goes);
 * the answer carries the task under its loadout id.
 */
export async function forwardTaskCall(
  context: Pick<GatewayContext, 'pool' | 'tasks'>,
  owner: object,
  route: Route,
  params: Record<string, unknown>,
  call: ClientRequest,
): Promise<Record<string, unknown>> {
  const result = await forward(context.pool, toolCallTarget(route, { ...params, name: route.tool }), call);
  const task = result.task as Record<string, unknown> | undefined;
  // A server that ran the call at once (no task support) answers with a plain result: passed on as is.
  if (typeof task?.taskId !== 'string') return result;
  const id = context.tasks.add(owner, { server: route.server, taskId: task.taskId }, route.tool);
  return { ...result, task: withTaskId(task, id) };
}

// The 2025-11-25 task methods are outside the SDK's typed method map (tasks moved to an extension
// in 2026-07-28), so they are registered in its custom-method form, with these schemas.
const TaskParams = z.looseObject({ taskId: z.string() });
const ListParams = z.looseObject({ cursor: z.string().optional() });

/** Register tasks/get, tasks/result, tasks/cancel and tasks/list for the session whose hub identity is `owner`. */
export function serveTasks(server: Server, context: GatewayContext, owner: object): void {
  const { tasks, pool } = context;
  const toOwner = (method: 'tasks/get' | 'tasks/result' | 'tasks/cancel') =>
    server.setRequestHandler(method, { params: TaskParams }, async (params, ctx) => {
      const id = params.taskId;
      const target = tasks.resolve(owner, id);
      const result = await forward(
        pool,
        { server: target.server, method, params: { ...params, taskId: target.taskId }, label: `${method} of task ${id}` },
        { ...clientRequestOf(ctx, server), principal: context.principal.id },
      );
      return withTaskId(result, id);
    });
  toOwner('tasks/get');
  toOwner('tasks/result');
  toOwner('tasks/cancel');
  server.setRequestHandler('tasks/list', { params: ListParams }, (params, ctx) =>
    tasks.list(owner, (name, cursor) =>
      forward(
        pool,
        { server: name, method: 'tasks/list', params: cursor ? { cursor } : {}, label: `tasks/list of server '${name}'` },
        { ...clientRequestOf(ctx, server), principal: context.principal.id },
      ),
    ),
  );
}
