// The pool's record of which session made each call in flight must end with the call, however it
// ends (answered, failed, cancelled): a stale record would leak memory per call and would make a
// later sampling request look like it had two possible sessions, so it would be refused.
import type { CreateMessageResult } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../src/config/index.js';
import { ServerPool, type DownstreamCaller } from '../../src/downstream/index.js';
import { Cancellation, silentLogger } from '../../src/shared/index.js';
import { fixture, textOf } from '../helpers/gateway.js';

function callerAnswering(answer: string): DownstreamCaller {
  const result: CreateMessageResult = { role: 'assistant', model: 'test', content: { type: 'text', text: answer } };
  return { owner: {}, relay: () => Promise.resolve(result) };
}

describe('ServerPool in-flight callers', () => {
  let pool: ServerPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('forgets the caller of every answered, failed and cancelled call', async () => {
    // A 1 s call timeout makes a long wait fail on the downstream side.
    const box = ServerConfigSchema.parse({ command: process.execPath, args: [fixture('interactive')], timeout_seconds: 1 });
    // The 1 s bounds calls, not the start: a loaded machine can take longer to spawn the fixture.
    pool = new ServerPool({ box }, { logger: silentLogger, minStartTimeoutMs: 15_000 });
    const earlier = callerAnswering('from the earlier session');
    for (let call = 0; call < 20; call++) await pool.callTool('box', 'echo', { text: `${call}` }, { caller: earlier });
    await expect(pool.callTool('box', 'wait', { ms: 60_000 }, { caller: earlier })).rejects.toThrow(/timed out/i);
    await expect(
      pool.callTool('box', 'ask', { prompt: 'hi' }, { caller: { owner: {}, relay: () => Promise.reject(new Error('no model')) } }),
    ).resolves.toMatchObject({ isError: true });
    const cancel = new Cancellation();
    // Cancelled once the server has started waiting (it reports progress then).
    const waiting = pool.callTool(
      'box',
      'wait',
      { ms: 60_000 },
      { caller: earlier, cancellation: cancel, onProgress: () => cancel.cancel(new Error('aborted by the test')) },
    );
    await expect(waiting).rejects.toThrow(/abort/i);
    expect(pool.status('box').inFlight).toBe(0);

    // Only the new session's call is in flight now, so its sampling request is relayed to it.
    const asked = await pool.callTool('box', 'ask', { prompt: 'hi' }, { caller: callerAnswering('from the new session') });
    expect(textOf(asked)).toBe('model said: from the new session');
  });
});
