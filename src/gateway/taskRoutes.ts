// Task-augmented tool calls (spec 2025-11-25) through loadout. A downstream task id is never shown
// to a client: each task gets a loadout id (a random UUID) bound to the session that created it
// and to (server, downstream id). Two servers may use the same ids without meeting, and a session
// can neither see nor reach another session's tasks: an id it does not own is "not found".
import { randomUUID } from 'node:crypto';
import { ProtocolError, RELATED_TASK_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server';

/** The downstream side of a task. */
export interface TaskTarget {
  readonly server: string;
  readonly taskId: string;
}

interface TaskEntry extends TaskTarget {
  readonly owner: object;
  /** The downstream tool the task runs: a policy that no longer grants it hides the task (hideWhere). */
  readonly tool: string;
}

/** A task hidden from its session (hideWhere): its loadout id and what it ran. */
export interface HiddenTask extends TaskTarget {
  readonly id: string;
  readonly tool: string;
}

// Pages of tasks/list read from one server per client tasks/list (a runaway cursor stops here).
const MAX_LIST_PAGES = 20;

/** Loadout task ids ↔ (owning session, server, downstream id), shared by every session. */
export class TaskRoutes {
  readonly #byId = new Map<string, TaskEntry>();
  readonly #byDownstream = new Map<string, string>();

  /** Record a task `server` created for `owner` by a call of its `tool`; returns the id the client sees. */
  add(owner: object, target: TaskTarget, tool: string): string {
    const id = randomUUID();
    this.#byId.set(id, { owner, tool, ...target });
    this.#byDownstream.set(downstreamKey(target), id);
    return id;
  }

  /** The task behind `id` if `owner` created it; otherwise InvalidParams, as for an unknown id. */
  resolve(owner: object, id: unknown): TaskTarget {
    const entry = typeof id === 'string' ? this.#byId.get(id) : undefined;
    if (!entry || entry.owner !== owner)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task '${String(id)}' not found in this session`);
    return entry;
  }

  /** The client-facing id and owner of a downstream task, if loadout created it. */
  fromDownstream(target: TaskTarget): { id: string; owner: object } | undefined {
    const id = this.#byDownstream.get(downstreamKey(target));
    const entry = id === undefined ? undefined : this.#byId.get(id);
    return entry && { id: id!, owner: entry.owner };
  }

  /** The servers `owner` has tasks on. */
  serversOf(owner: object): string[] {
    return [...new Set([...this.#byId.values()].filter((entry) => entry.owner === owner).map((entry) => entry.server))];
  }

  /** Forget a session's tasks (it ended; nobody can ask about them any more). */
  dropOwner(owner: object): void {
    this.hideWhere(owner, () => true);
  }

  /**
   * Forget those of `owner`'s tasks that `hidden` picks (server and tool): from now on they are
   * unknown ids to every task method, absent from tasks/list, and their status notices go nowhere.
   */
  hideWhere(owner: object, hidden: (server: string, tool: string) => boolean): HiddenTask[] {
    const gone: HiddenTask[] = [];
    for (const [id, entry] of this.#byId) {
      if (entry.owner !== owner || !hidden(entry.server, entry.tool)) continue;
      this.#byId.delete(id);
      this.#byDownstream.delete(downstreamKey(entry));
      gone.push({ id, server: entry.server, taskId: entry.taskId, tool: entry.tool });
    }
    return gone;
  }

  /**
   * The client's tasks/list: every page of tasks/list of each server it has tasks on, only its
   * own tasks, under their loadout ids. One page (the spec allows a server to return all).
   */
  async list(
    owner: object,
    request: (server: string, cursor: string | undefined) => Promise<Record<string, unknown>>,
  ): Promise<{ tasks: Array<Record<string, unknown>> }> {
    const tasks: Array<Record<string, unknown>> = [];
    for (const server of this.serversOf(owner)) {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const answer = await request(server, cursor);
        for (const task of Array.isArray(answer.tasks) ? (answer.tasks as Array<Record<string, unknown>>) : []) {
          const known = typeof task.taskId === 'string' ? this.fromDownstream({ server, taskId: task.taskId }) : undefined;
          if (known?.owner === owner) tasks.push({ ...task, taskId: known.id });
        }
        cursor = typeof answer.nextCursor === 'string' ? answer.nextCursor : undefined;
        if (cursor === undefined) break;
      }
    }
    return { tasks };
  }
}

/** `value` with its `taskId` (and a related-task `_meta` id) replaced by `id`. */
export function withTaskId(value: Record<string, unknown>, id: string): Record<string, unknown> {
  const next: Record<string, unknown> = 'taskId' in value ? { ...value, taskId: id } : { ...value };
  const meta = value._meta as Record<string, unknown> | undefined;
  if (meta && typeof meta[RELATED_TASK_META_KEY] === 'object' && meta[RELATED_TASK_META_KEY] !== null) {
    next._meta = { ...meta, [RELATED_TASK_META_KEY]: { ...meta[RELATED_TASK_META_KEY], taskId: id } };
  }
  return next;
}

function downstreamKey(target: TaskTarget): string {
  return `${target.server}\n${target.taskId}`;
}
