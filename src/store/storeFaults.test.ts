// Store faults are worded and classed by their SQLSTATE or socket code, never by their message text.
import { describe, expect, it } from 'vitest';
import { LoadoutError } from '../shared/index.js';
import { isStoreAway, storeFault } from './storeFaults.js';
import { parseStoreUrl } from './storeUrl.js';

const url = parseStoreUrl('postgresql://me:pw@db/loadout');

// A server error as postgres.js gives it: the SQLSTATE in `code`, Postgres's own words in the message.
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

describe('storeFault', () => {
  it('words a connection fault by its code and keeps it on one line', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(storeFault(url, 'connect', error).message).toBe(
      'store postgresql://me:***@db/loadout: cannot connect: nothing is listening there (is Postgres running?) (ECONNREFUSED)',
    );
    expect(storeFault(url, 'connect', new AggregateError([error])).message).toContain('(ECONNREFUSED)');
  });

  it('never calls a shutdown "starting up": 57P01, 57P02 and 57P03 each have their own words', () => {
    const read = (code: string, message: string) => storeFault(url, "read equipped '@last-stop'", serverError(code, message)).message;
    expect(read('57P01', 'terminating connection due to administrator command')).toBe(
      "store postgresql://me:***@db/loadout: cannot read equipped '@last-stop': the server is shutting down (admin shutdown) (57P01)",
    );
    expect(read('57P02', 'terminating connection because of crash of another server process')).toContain(
      'the server crashed and is restarting (crash shutdown) (57P02)',
    );
    // Postgres sends 57P03 while shutting down too: the words cover every case the code stands for.
    const shuttingDown = read('57P03', 'the database system is shutting down');
    expect(shuttingDown).toContain('the server is not accepting connections now (starting up, shutting down or recovering) (57P03)');
    expect(shuttingDown).not.toMatch(/the server is starting up/);
  });

  it('keeps the message of a fault whose code it does not know, and a LoadoutError as it is', () => {
    expect(storeFault(url, 'save toolset x', serverError('23505', 'duplicate key')).message).toBe(
      'store postgresql://me:***@db/loadout: cannot save toolset x: duplicate key',
    );
    const given = new LoadoutError('STORE_CONFLICT', 'moved on');
    expect(storeFault(url, 'save', given)).toBe(given);
  });
});

describe('isStoreAway', () => {
  it('is true for a store that is unreachable, shutting down or restarting, and false for a fault a person must fix', () => {
    for (const code of ['ECONNREFUSED', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '57P02', '57P03', '08006'])
      expect(isStoreAway(storeFault(url, 'read', serverError(code, 'any words')))).toBe(true);
    for (const code of ['28P01', '3D000', '42P01', '23505'])
      expect(isStoreAway(storeFault(url, 'read', serverError(code, 'any words')))).toBe(false);
    expect(isStoreAway(storeFault(url, 'connect', new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])))).toBe(
      true,
    );
    // A refused connection that is not a store fault (a downstream server's) is not the store away.
    expect(
      isStoreAway(new LoadoutError('SERVER_START_FAILED', 'x', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) })),
    ).toBe(false);
    // Wrapped again by a higher layer (a toolset that could not be read), it is still the store away.
    const wrapped = new LoadoutError('TOOLSET_INVALID', 'toolset talk: unreadable', {
      cause: storeFault(url, 'read', serverError('57P01', 'x')),
    });
    expect(isStoreAway(wrapped)).toBe(true);
  });
});
