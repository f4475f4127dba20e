import { describe, expect, it } from 'vitest';
import { parseStoreUrl, storeFault } from './storeUrl.js';

describe('parseStoreUrl', () => {
  it('masks the password in everything it shows', () => {
    expect(parseStoreUrl('postgres://me:hunter2@db:5432/loadout').masked).toBe('postgres://me:***@db:5432/loadout');
    expect(() => parseStoreUrl('postgres://me:hunter2@')).toThrow(/^store URL 'postgres:\/\/me:\*\*\*@' is not a URL/);
    expect(() => parseStoreUrl('postgres://me:hunter2@db:5432')).toThrow("store URL 'postgres://me:***@db:5432' names no database");
  });

  it('words a connection fault by its code and keeps it on one line', () => {
    const url = parseStoreUrl('postgresql://me:pw@db/loadout');
    const error = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(storeFault(url, 'connect', error).message).toBe(
      'store postgresql://me:***@db/loadout: cannot connect: nothing is listening there (is Postgres running?) (ECONNREFUSED)',
    );
    expect(storeFault(url, 'connect', new AggregateError([error])).message).toContain('(ECONNREFUSED)');
  });
});
