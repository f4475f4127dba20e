// The guard tells a lost connection to the store apart from every other unhandled rejection.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/index.js';
import { guardConnectionLoss, isStoreConnectionLoss } from './connectionLossGuard.js';
import { parseStoreUrl } from './storeUrl.js';

const URL_5433 = parseStoreUrl('postgres://me:secret@127.0.0.1:5433/loadout');

function connectionError(code: string, port?: number): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:${port ?? ''}`), { code, ...(port === undefined ? {} : { port }) });
}

describe('the connection-loss guard', () => {
  it("knows a refused or lost connection to the store's own port, and nothing else", () => {
    expect(isStoreConnectionLoss(connectionError('ECONNREFUSED', 5433), URL_5433)).toBe(true);
    expect(isStoreConnectionLoss(connectionError('CONNECTION_CLOSED'), URL_5433)).toBe(true);
    expect(isStoreConnectionLoss(connectionError('ECONNREFUSED', 8080), URL_5433)).toBe(false);
    expect(isStoreConnectionLoss(new TypeError('x is not a function'), URL_5433)).toBe(false);
    expect(isStoreConnectionLoss('ECONNREFUSED', URL_5433)).toBe(false);
    expect(isStoreConnectionLoss(connectionError('ECONNREFUSED', 5432), parseStoreUrl('postgres://127.0.0.1/loadout'))).toBe(true);
  });

  it('keeps any other unhandled rejection fatal while it listens, and stops listening when told', () => {
    const before = process.listenerCount('unhandledRejection');
    const stop = guardConnectionLoss(URL_5433, silentLogger);
    const listener = process.listeners('unhandledRejection').at(-1)!;
    expect(() => listener(connectionError('ECONNREFUSED', 5433), Promise.resolve())).not.toThrow();
    const other = new TypeError('a defect');
    expect(() => listener(other, Promise.resolve())).toThrow(other);
    stop();
    expect(process.listenerCount('unhandledRejection')).toBe(before);
  });
});
