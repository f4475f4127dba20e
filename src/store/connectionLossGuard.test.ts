// The guard tells a lost connection to the store apart from every other unhandled rejection.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/index.js';
import { ConnectionLossGuard, isStoreConnectionLoss } from './connectionLossGuard.js';
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

  it("absorbs only a watched store's loss, hears when the first store is watched and the last goes, and hooks nothing itself", () => {
    const before = process.listenerCount('unhandledRejection');
    const watching: boolean[] = [];
    const guard = new ConnectionLossGuard((on) => watching.push(on));
    const stopFirst = guard.watch(URL_5433, silentLogger);
    const stopSecond = guard.watch(parseStoreUrl('postgres://127.0.0.1:6543/other'), silentLogger);
    expect(watching).toEqual([true]);
    expect(process.listenerCount('unhandledRejection')).toBe(before);
    expect(guard.absorbs(connectionError('ECONNREFUSED', 5433))).toBe(true);
    expect(guard.absorbs(connectionError('ECONNREFUSED', 6543))).toBe(true);
    expect(guard.absorbs(new TypeError('a defect'))).toBe(false);
    stopFirst();
    expect(guard.absorbs(connectionError('ECONNREFUSED', 5433))).toBe(false);
    stopFirst();
    expect(watching).toEqual([true]);
    stopSecond();
    expect(watching).toEqual([true, false]);
  });
});
