import { describe, expect, it } from 'vitest';
import { TaskRoutes, withTaskId } from './taskRoutes.js';

describe('TaskRoutes', () => {
  it('gives the same downstream id on two servers two loadout ids, each reaching its own server', () => {
    const routes = new TaskRoutes();
    const session = {};
    const a = routes.add(session, { server: 'a', taskId: '1' });
    const b = routes.add(session, { server: 'b', taskId: '1' });
    expect(a).not.toBe(b);
    expect(routes.resolve(session, a)).toMatchObject({ server: 'a', taskId: '1' });
    expect(routes.resolve(session, b)).toMatchObject({ server: 'b', taskId: '1' });
    expect(routes.fromDownstream({ server: 'b', taskId: '1' })?.id).toBe(b);
  });

  it('answers another session, an unknown id and a dropped session as not found', () => {
    const routes = new TaskRoutes();
    const owner = {};
    const id = routes.add(owner, { server: 'a', taskId: 't' });
    expect(() => routes.resolve({}, id)).toThrow(/not found in this session/);
    expect(() => routes.resolve(owner, 'nope')).toThrow(/not found/);
    routes.dropOwner(owner);
    expect(() => routes.resolve(owner, id)).toThrow(/not found/);
    expect(routes.fromDownstream({ server: 'a', taskId: 't' })).toBeUndefined();
  });

  it('lists only the owner tasks across its servers, under loadout ids', async () => {
    const routes = new TaskRoutes();
    const owner = {};
    const mine = routes.add(owner, { server: 'a', taskId: 'x' });
    routes.add({}, { server: 'a', taskId: 'y' });
    const listed = await routes.list(owner, () =>
      Promise.resolve({ tasks: [{ taskId: 'x', status: 'working' }, { taskId: 'y', status: 'working' }, { taskId: 'z' }] }),
    );
    expect(listed).toEqual({ tasks: [{ taskId: mine, status: 'working' }] });
  });

  it('swaps the id in a task and in related-task _meta', () => {
    expect(withTaskId({ taskId: 'down', status: 'working' }, 'up')).toEqual({ taskId: 'up', status: 'working' });
    expect(withTaskId({ content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'down' } } }, 'up')).toEqual({
      content: [],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'up' } },
    });
  });
});
