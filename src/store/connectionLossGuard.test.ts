// The guard tells a lost connection to the store apart from every other unhandled rejection.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/index.js';
import { guardConnectionLoss, isStoreConnectionLoss } from './connectionLossGuard.js';
import { parseStoreUrl } from './storeUrl.js';

const URL_5433 = parseStoreUrl('postgres://me:secret@127.0.0.1:5433/loadout');

function connectionError(code: string, port?: number, address = '127.0.0.1'): Error {
  return Object.assign(new Error(`connect ${code} ${address}:${port ?? ''}`), { code, address, ...(port === undefined ? {} : { port }) });
}

describe('the connection-loss guard', () => {
  it("knows a refused or lost connection to the store's own port, and nothing else", () => {
    expect(isStoreConnectionLoss(connectionError('ECONNREFUSED', 5433), URL_5433)).toBe(true);
    expect(isStoreConnectionLoss(connectionError('CONNECTION_CLOSED'), URL_5433)).toBe(true);
    expect(isStoreConnectionLoss(connectionError('ECONNREFUSED', 8080), URL_5433)).toBe(false);
    // A downstream server's reset on another host is not the store's.
    expect(isStoreConnectionLoss(connectionError('ECONNRESET', undefined, '10.0.0.9'), URL_5433)).toBe(false);
    expect(isStoreConnectionLoss(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), URL_5433)).toBe(false);
    expect(isStoreConnectionLoss(new TypeError('x is not a function'), URL_5433)).toBe(false);
    expect(isStoreConnectionLoss('ECONNREFUSED', URL_5433)).toBe(false);
    expect(isStoreConnectionLoss(connectionError('ECONNREFUSED', 5432), parseStoreUrl('postgres://127.0.0.1/loadout'))).toBe(true);
  });

  it('keeps any other unhandled rejection fatal, serves every open store with one listener, and goes when the last closes', () => {
    const before = process.listenerCount('unhandledRejection');
    const stopFirst = guardConnectionLoss(URL_5433, silentLogger);
    const stopSecond = guardConnectionLoss(parseStoreUrl('postgres://127.0.0.1:6543/other'), silentLogger);
    expect(process.listenerCount('unhandledRejection')).toBe(before + 1);
    const listener = process.listeners('unhandledRejection').at(-1)!;
    expect(() => listener(connectionError('ECONNREFUSED', 5433), Promise.resolve())).not.toThrow();
    expect(() => listener(connectionError('ECONNREFUSED', 6543), Promise.resolve())).not.toThrow();
    const other = new TypeError('a defect');
    expect(() => listener(other, Promise.resolve())).toThrow(other);
    stopFirst();
    expect(() => listener(connectionError('ECONNREFUSED', 5433), Promise.resolve())).toThrow();
    stopSecond();
    expect(process.listenerCount('unhandledRejection')).toBe(before);
  });
});
