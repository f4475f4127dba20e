// ServerPool.request is the one way any method reaches a downstream server, over a real stdio
// child: raw results of any method, progress of our own requests to the caller only, and every
// other notification reported as a pool event.
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../src/config/index.js';
import { ServerPool, type PoolEvent } from '../../src/downstream/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { eventually, fixture } from '../helpers/gateway.js';

describe('ServerPool.request', () => {
  let pool: ServerPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('sends any method and reports notifications: progress to the caller, the rest as events', async () => {
    const box = ServerConfigSchema.parse({ command: process.execPath, args: [fixture('interactive')] });
    pool = new ServerPool({ box }, { logger: silentLogger, minStartTimeoutMs: 15_000 });
    const events: PoolEvent[] = [];
    pool.onEvent((event) => events.push(event));

    expect(await pool.request('box', 'ping', undefined)).toEqual({});
    const listed = await pool.request('box', 'tools/list', undefined);
    expect((listed.tools as Array<{ name: string }>).map((tool) => tool.name)).toContain('echo');
    expect((await pool.connection('box')).serverCapabilities?.tools?.listChanged).toBe(true);

    const progress: unknown[] = [];
    const done = await pool.request('box', 'tools/call', { name: 'progress', arguments: { steps: 2 } }, { onProgress: (step) => progress.push(step) });
    expect(done).toMatchObject({ content: [{ type: 'text', text: 'did 2 steps' }] });
    expect(progress).toEqual([1, 2].map((step) => ({ progress: step, total: 2, message: `step ${step}` })));

    await pool.request('box', 'tools/call', { name: 'grow' });
    await eventually(() => events.some((event) => event.type === 'tools-changed'), 10_000, 'tools-changed');
    const notifications = events.filter((event) => event.type === 'notification');
    expect(notifications).toEqual([{ type: 'notification', server: 'box', notification: { method: 'notifications/tools/list_changed' } }]);

    await expect(pool.request('box', 'no/such/method', {})).rejects.toMatchObject({ code: -32601 });
    expect(pool.inFlight('box')).toBe(0);
  });
});
