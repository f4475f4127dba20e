import { describe, expect, it } from 'vitest';
import { TaskRoutes, withTaskId } from './taskRoutes.js';

describe('TaskRoutes', () => {
  it('gives the same downstream id on two servers two loadout ids, each reaching its own server', () => {
    const routes = new TaskRoutes();
    const session = {};
    const a = routes.add(session, { server: 'a', taskId: '1' }, 'tool');
    const b = routes.add(session, { server: 'b', taskId: '1' }, 'tool');
    expect(a).not.toBe(b);
    expect(routes.resolve(session, a)).toMatchObject({ server: 'a', taskId: '1' });
    expect(routes.resolve(session, b)).toMatchObject({ server: 'b', taskId: '1' });
    expect(routes.fromDownstream({ server: 'b', taskId: '1' })?.id).toBe(b);
  });

  it('answers another session, an unknown id and a dropped session as not found', () => {
    const routes = new TaskRoutes();
    const owner = {};
    const id = routes.add(owner, { server: 'a', taskId: 't' }, 'tool');
    expect(() => routes.resolve({}, id)).toThrow(/not found in this session/);
    expect(() => routes.resolve(owner, 'nope')).toThrow(/not found/);
    routes.dropOwner(owner);
    expect(() => routes.resolve(owner, id)).toThrow(/not found/);
    expect(routes.fromDownstream({ server: 'a', taskId: 't' })).toBeUndefined();
  });

  it('hides the tasks a revocation picks from their owner, and only those', async () => {
    const routes = new TaskRoutes();
    const owner = {};
    const kept = routes.add(owner, { server: 'a', taskId: 'k' }, 'allowed');
    const taken = routes.add(owner, { server: 'a', taskId: 't' }, 'revoked');
    const other = routes.add({}, { server: 'a', taskId: 'o' }, 'revoked');
    expect(routes.hideWhere(owner, (_server, tool) => tool === 'revoked')).toEqual([
      { id: taken, server: 'a', taskId: 't', tool: 'revoked' },
    ]);
    expect(() => routes.resolve(owner, taken)).toThrow(/not found in this session/);
    expect(routes.fromDownstream({ server: 'a', taskId: 't' })).toBeUndefined();
    expect(routes.resolve(owner, kept)).toMatchObject({ taskId: 'k' });
    expect(routes.fromDownstream({ server: 'a', taskId: 'o' })?.id).toBe(other);
    const listed = await routes.list(owner, () => Promise.resolve({ tasks: [{ taskId: 'k' }, { taskId: 't' }] }));
    expect(listed).toEqual({ tasks: [{ taskId: kept }] });
  });

  it('lists only the owner tasks across its servers, under loadout ids', async () => {
    const routes = new TaskRoutes();
    const owner = {};
    const mine = routes.add(owner, { server: 'a', taskId: 'x' }, 'tool');
    routes.add({}, { server: 'a', taskId: 'y' }, 'tool');
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
