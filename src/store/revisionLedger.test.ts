// A store's ledger keeps its own state: what one store's layouts marked is that store's alone.
import { describe, expect, it } from 'vitest';
import { RevisionLedger } from './revisionLedger.js';

describe('RevisionLedger', () => {
  it("keeps the fingerprints its store marked records with apart from another store's", () => {
    const mine = new RevisionLedger('/nowhere', { inMemory: true });
    const theirs = new RevisionLedger('/nowhere', { inMemory: true });
    const record = { tools: ['a'] };
    mine.fingerprints.fromText(record, '{ "tools": ["a"] }\n');
    expect(mine.fingerprints.known(record)).toBeDefined();
    expect(theirs.fingerprints.known(record)).toBeUndefined();
    // Unmarked, a record is told by its JSON: equal content, equal fingerprint.
    expect(theirs.fingerprints.of(record)).toBe(theirs.fingerprints.of({ tools: ['a'] }));
    expect(mine.fingerprints.of(record)).not.toBe(theirs.fingerprints.of(record));
  });

  it('numbers revisions per ledger, in memory', async () => {
    const first = new RevisionLedger('/nowhere', { inMemory: true });
    const second = new RevisionLedger('/nowhere', { inMemory: true });
    expect(await first.record('a', 'x')).toBe(1);
    expect(await first.record('b', 'y')).toBe(2);
    expect(await second.record('a', 'x')).toBe(1);
  });
});
