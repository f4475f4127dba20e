// A call waiting for its client's input: kept under an unguessable state for one retry of the
// same call, dropped (its downstream request cancelled) when no retry comes in time.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { InputRounds, RoundTripCall, UnknownRequestStateError } from './inputRounds.js';

const elicit = {
  method: 'elicitation/create',
  params: { message: 'Proceed?', requestedSchema: { type: 'object', properties: {} } },
} as const;

describe('InputRounds', () => {
  it('hands a parked call to one retry of the same call, and answers its request with the client’s response', async () => {
    const rounds = new InputRounds(pino({ level: 'silent' }));
    const call = new RoundTripCall('srv.tool');
    const answered = call.ask(elicit, new AbortController().signal);
    expect(await call.next()).toBe('asked');
    const [key] = Object.keys(call.inputRequests());
    const state = rounds.park(call, 60_000);
    expect(() => rounds.take(state, 'srv.other')).toThrow(UnknownRequestStateError);
    expect(rounds.take(state, 'srv.tool')).toBe(call);
    expect(() => rounds.take(state, 'srv.tool')).toThrow(/unknown or expired/);
    call.answer({ [key!]: { action: 'accept', content: { ok: true } } });
    await expect(answered).resolves.toEqual({ action: 'accept', content: { ok: true } });
    rounds.close();
  });

  it('asks under the key a 2026-07-28 server chose, unless another waiting request has it', async () => {
    const call = new RoundTripCall('srv.tool');
    const signal = new AbortController().signal;
    const first = call.ask(elicit, signal, 'user_name');
    const others = [call.ask(elicit, signal, 'user_name'), call.ask(elicit, signal)].map((asked) => asked.catch(() => 'dropped'));
    const keys = Object.keys(call.inputRequests());
    expect(keys[0]).toBe('user_name');
    expect(new Set(keys).size).toBe(3);
    call.answer({ user_name: { action: 'accept', content: { name: 'Alice' } } });
    await expect(first).resolves.toEqual({ action: 'accept', content: { name: 'Alice' } });
    call.drop('done');
    expect(await Promise.all(others)).toEqual(['dropped', 'dropped']);
  });

  it('refuses at once a request whose downstream already gave up, and keeps no listener on an answered one', async () => {
    const call = new RoundTripCall('srv.tool');
    const gaveUp = new AbortController();
    gaveUp.abort(new Error('the server timed out'));
    await expect(call.ask(elicit, gaveUp.signal)).rejects.toThrow('the server timed out');
    expect(call.inputRequests()).toEqual({});

    const live = new AbortController();
    let listeners = 0;
    const add = live.signal.addEventListener.bind(live.signal);
    const remove = live.signal.removeEventListener.bind(live.signal);
    live.signal.addEventListener = (...args: Parameters<typeof add>) => (listeners++, add(...args));
    live.signal.removeEventListener = (...args: Parameters<typeof remove>) => (listeners--, remove(...args));
    const answered = call.ask(elicit, live.signal);
    expect(await call.next()).toBe('asked');
    const [key] = Object.keys(call.inputRequests());
    call.answer({ [key!]: { action: 'decline' } });
    await expect(answered).resolves.toEqual({ action: 'decline' });
    expect(listeners).toBe(0);
  });

  it('drops a call nobody retries in time: its request is refused and its downstream request cancelled', async () => {
    const rounds = new InputRounds(pino({ level: 'silent' }));
    const call = new RoundTripCall('srv.tool');
    const answered = call.ask(elicit, new AbortController().signal);
    call.inputRequests();
    const state = rounds.park(call, 10);
    await expect(answered).rejects.toThrow(/did not answer within/);
    expect(call.cancellation.cancelled).toBe(true);
    expect(() => rounds.take(state, 'srv.tool')).toThrow(UnknownRequestStateError);
  });

  it('ends the retry of a call whose downstream failed while it waited with that failure, not with another round', async () => {
    const rounds = new InputRounds(pino({ level: 'silent' }));
    const call = new RoundTripCall('srv.tool');
    let crash!: (error: Error) => void;
    call.begin(new Promise((_resolve, reject) => (crash = reject)));
    void call.ask(elicit, new AbortController().signal).catch(() => undefined);
    expect(await call.next()).toBe('asked');
    call.inputRequests();
    const state = rounds.park(call, 60_000);
    crash(new Error("Server 'srv' closed the connection during srv.tool"));
    // The client retries later: the failure has been read by then.
    await call.outcome.catch(() => undefined);
    const retried = rounds.take(state, 'srv.tool');
    retried.answer(undefined);
    expect(await retried.next()).toBe('settled');
    await expect(retried.outcome).rejects.toThrow(/closed the connection/);
  });
});
