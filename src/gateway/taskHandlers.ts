// The client-facing side of task-augmented tool calls: a tools/call with `task` is forwarded
// like any call and answers with the task under a loadout id; tasks/get, tasks/result,
// tasks/cancel and tasks/list go to the server that owns each task, through forward(), with the
// ids swapped both ways (taskRoutes.ts). Only the session that created a task can reach it.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { Route } from '../registry/index.js';
import { changedToolRefusal } from './changedToolGuard.js';
import type { GatewayContext } from './context.js';
import { clientRequestOf, forward, type ClientRequest } from './forward.js';
import { withTaskId } from './taskRoutes.js';

/** What loadout declares about tasks: tools/call may be task-augmented; tasks can be listed and cancelled. */
export const TASK_CAPABILITIES: ServerCapabilities = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };

/** Forward a task-augmented tools/call of `route`; the answer carries the task under its loadout id. */
export async function forwardTaskCall(
  context: GatewayContext,
  owner: object,
  route: Route,
  params: Record<string, unknown>,
  call: ClientRequest,
): Promise<Record<string, unknown>> {
  // A changed tool is refused here too: a task-augmented call may be the one that starts its server.
  const refusal = context.settings.block_changed_tools ? await changedToolRefusal(context, route) : undefined;
  if (refusal) return refusal;
  const result = await forward(
    context.pool,
    { server: route.server, method: 'tools/call', params: { ...params, name: route.tool }, label: route.id },
    call,
  );
  const task = result.task as Record<string, unknown> | undefined;
  // A server that ran the call at once (no task support) answers with a plain result: passed on as is.
  if (typeof task?.taskId !== 'string') return result;
  const id = context.tasks.add(owner, { server: route.server, taskId: task.taskId });
  return { ...result, task: withTaskId(task, id) };
}

/** Register tasks/get, tasks/result, tasks/cancel and tasks/list for the session whose hub identity is `owner`. */
export function serveTasks(server: Server, context: GatewayContext, owner: object): void {
  const { tasks, pool } = context;
  const toOwner =
    (method: 'tasks/get' | 'tasks/result' | 'tasks/cancel') =>
    async (message: { params: { taskId: string } }, extra: Parameters<typeof clientRequestOf>[0]) => {
      const id = message.params.taskId;
      const target = tasks.resolve(owner, id);
      const result = await forward(
        pool,
        { server: target.server, method, params: { ...message.params, taskId: target.taskId }, label: `${method} of task ${id}` },
        clientRequestOf(extra, server),
      );
      return withTaskId(result, id);
    };
  server.setRequestHandler(GetTaskRequestSchema, toOwner('tasks/get'));
  server.setRequestHandler(GetTaskPayloadRequestSchema, toOwner('tasks/result'));
  server.setRequestHandler(CancelTaskRequestSchema, toOwner('tasks/cancel'));
  server.setRequestHandler(ListTasksRequestSchema, (_message, extra) =>
    tasks.list(owner, (name, cursor) =>
      forward(
        pool,
        { server: name, method: 'tasks/list', params: cursor ? { cursor } : {}, label: `tasks/list of server '${name}'` },
        clientRequestOf(extra, server),
      ),
    ),
  );
}
