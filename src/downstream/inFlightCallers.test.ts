import { ProtocolError } from '@modelcontextprotocol/server';
import type { CreateMessageRequest } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { DownstreamCaller } from './inFlightCallers.js';
import { InFlightCallers } from './inFlightCallers.js';

const SAMPLING: CreateMessageRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } };
const signal = new AbortController().signal;

function caller(owner: object, answer: string): DownstreamCaller {
  return { owner, relay: () => Promise.resolve({ answer }) };
}

describe('InFlightCallers', () => {
  it('relays to the session with calls in flight, using its most recent call', async () => {
    const callers = new InFlightCallers();
    const session = {};
    callers.add('git', caller(session, 'first'));
    callers.add('git', caller(session, 'second'));
    expect(await callers.relay('git', SAMPLING, signal)).toEqual({ answer: 'second' });
  });

  it('ignores calls to other servers', async () => {
    const callers = new InFlightCallers();
    callers.add('git', caller({}, 'git caller'));
    callers.add('web', caller({}, 'web caller'));
    expect(await callers.relay('web', SAMPLING, signal)).toEqual({ answer: 'web caller' });
  });

  it('refuses when two sessions have calls in flight to the server, rather than guess', async () => {
    const callers = new InFlightCallers();
    callers.add('git', caller({}, 'a'));
    callers.add('git', caller({}, 'b'));
    await expect(callers.relay('git', SAMPLING, signal)).rejects.toThrow(/2 client sessions/);
  });

  it('refuses when no call is in flight, including after the last call ended', async () => {
    const callers = new InFlightCallers();
    const end = callers.add('git', caller({}, 'a'));
    end();
    const refusal = callers.relay('git', SAMPLING, signal);
    await expect(refusal).rejects.toBeInstanceOf(ProtocolError);
    await expect(refusal).rejects.toThrow(/no call to it was in flight/);
  });
});
