// A 2025 session resumed from the store replays its initialize: whether that was answered is read
// from the answer's JSON-RPC messages.
import { describe, expect, it } from 'vitest';
import { answersWithResult } from './sharedSessions.js';

const sse = (...messages: unknown[]) =>
  new Response(messages.map((message) => `event: message\ndata: ${JSON.stringify(message)}\n\n`).join(''), {
    headers: { 'content-type': 'text/event-stream' },
  });
const json = (message: unknown) => new Response(JSON.stringify(message), { headers: { 'content-type': 'application/json' } });

async function answered(answer: Response, id = 0): Promise<boolean> {
  return answersWithResult(answer, await answer.text(), id);
}

describe('answersWithResult', () => {
  it('is a result for the replayed id, on an SSE stream or as one JSON body', async () => {
    const result = {
      jsonrpc: '2.0',
      id: 0,
      result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } },
    };
    expect(await answered(sse(result))).toBe(true);
    expect(await answered(json(result))).toBe(true);
    expect(await answered(json({ ...result, id: 1 }))).toBe(false);
  });

  it('is not an error whose words hold "result"', async () => {
    const error = { jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'Unsupported "result" shape', data: { result: 1 } } };
    expect(await answered(sse(error))).toBe(false);
    expect(await answered(json(error))).toBe(false);
    expect(await answered(new Response('not json "result"'))).toBe(false);
  });
});
