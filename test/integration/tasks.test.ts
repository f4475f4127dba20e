// Task-augmented tool calls (spec 2025-11-25) through loadout over streamable HTTP, against
// server-everything's simulate-research-query (taskSupport: required): the client sees loadout
// task ids, never the server's; tasks/get, tasks/list and tasks/result reach the owning server;
// status notifications carry the loadout id; another session can neither see nor reach the task.
import { ProtocolError } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THIRD_PARTY, nodeServer, writeServersYaml } from '../helpers/gateway.js';
import { httpHarness, type HttpHarness } from '../helpers/http.js';
import { collectNotifications } from '../helpers/notifications.js';

const Loose = z.looseObject({});
const TOOL = 'everything_simulate-research-query';

function raw(client: Client, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  return client.request({ method, params }, Loose, { timeout: 60_000 });
}

describe('task-augmented tool calls through loadout', () => {
  let harness: HttpHarness;

  beforeAll(async () => {
    harness = await httpHarness();
    await writeServersYaml(harness.dirs.configDir, { everything: nodeServer(THIRD_PARTY.everything) });
    await harness.start(['--equip', 'all']);
  });
  afterAll(async () => {
    await harness.teardown();
  });

  it('declares tasks and lists the task-only tool', async () => {
    const { client } = await harness.connect();
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tool = (await client.listTools()).tools.find((candidate) => candidate.name === TOOL);
    expect(tool?.execution).toEqual({ taskSupport: 'required' });
  });

  it('runs a task end to end under a loadout id that only its session can reach', async () => {
    const owner = await harness.connect();
    const other = await harness.connect();
    const notifications = collectNotifications(owner.client);

    const created = await raw(owner.client, 'tools/call', { name: TOOL, arguments: { topic: 'loadout' }, task: { ttl: 60_000 } });
    const task = created.task as { taskId: string; status: string };
    expect(task.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(['working', 'completed']).toContain(task.status);

    expect(await raw(owner.client, 'tasks/get', { taskId: task.taskId })).toMatchObject({ taskId: task.taskId });
    expect((await raw(owner.client, 'tasks/list', {})).tasks).toEqual([expect.objectContaining({ taskId: task.taskId })]);
    expect((await raw(other.client, 'tasks/list', {})).tasks).toEqual([]);
    const stolen = await raw(other.client, 'tasks/get', { taskId: task.taskId }).catch((error: unknown) => error);
    expect(stolen).toBeInstanceOf(ProtocolError);
    expect((stolen as ProtocolError).message).toContain('not found in this session');

    const result = await raw(owner.client, 'tasks/result', { taskId: task.taskId });
    expect(JSON.stringify(result.content)).toContain('Research Report: loadout');
    expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
    const status = await notifications.waitFor(
      (n) => n.method === 'notifications/tasks/status' && n.params?.status === 'completed',
      10_000,
      'the completed status',
    );
    expect(status.params?.taskId).toBe(task.taskId);
    expect(notifications.of('notifications/tasks/status').every((n) => n.params?.taskId === task.taskId)).toBe(true);
  }, 60_000);
});
