// The CLI, not the store, hooks the process: one listener while a store is open.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/index.js';
import { parseStoreUrl } from '../store/index.js';
import { storeConnectionLoss } from './rejectionGuard.js';

const lost = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 5433 });

describe("the CLI's rejection guard", () => {
  it('keeps any other unhandled rejection fatal, serves every open store with one listener, and goes when the last closes', () => {
    const before = process.listenerCount('unhandledRejection');
    const stopFirst = storeConnectionLoss.watch(parseStoreUrl('postgres://me:secret@127.0.0.1:5433/loadout'), silentLogger);
    const stopSecond = storeConnectionLoss.watch(parseStoreUrl('postgres://127.0.0.1:6543/other'), silentLogger);
    expect(process.listenerCount('unhandledRejection')).toBe(before + 1);
    const listener = process.listeners('unhandledRejection').at(-1)!;
    expect(() => listener(lost, Promise.resolve())).not.toThrow();
    const other = new TypeError('a defect');
    expect(() => listener(other, Promise.resolve())).toThrow(other);
    stopFirst();
    expect(() => listener(lost, Promise.resolve())).toThrow(lost);
    stopSecond();
    expect(process.listenerCount('unhandledRejection')).toBe(before);
  });
});
