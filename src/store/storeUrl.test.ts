import { describe, expect, it } from 'vitest';
import { parseStoreUrl } from './storeUrl.js';

describe('parseStoreUrl', () => {
  it('masks the password in everything it shows', () => {
    expect(parseStoreUrl('postgres://me:hunter2@db:5432/loadout').masked).toBe('postgres://me:***@db:5432/loadout');
    expect(() => parseStoreUrl('postgres://me:hunter2@')).toThrow(/^store URL 'postgres:\/\/me:\*\*\*@' is not a URL/);
    expect(() => parseStoreUrl('postgres://me:hunter2@db:5432')).toThrow("store URL 'postgres://me:***@db:5432' names no database");
  });
});
