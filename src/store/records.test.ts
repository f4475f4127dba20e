import { describe, expect, it } from 'vitest';
import { CatalogEntryRecordSchema } from './records.js';

describe('CatalogEntryRecordSchema', () => {
  const entry = (listFailures: unknown) => ({ discoveredAt: 'now', tools: [{ name: 'query' }], listFailures });

  it('takes a list failure with its JSON-RPC code, and one written before the code was kept', () => {
    expect(CatalogEntryRecordSchema.safeParse(entry({ prompts: { text: 'prompts/list failed', rpcCode: -32601 } })).success).toBe(true);
    expect(CatalogEntryRecordSchema.safeParse(entry({ prompts: 'prompts/list failed: Method not found (-32601)' })).success).toBe(true);
  });

  it('refuses a list failure without words', () => {
    expect(CatalogEntryRecordSchema.safeParse(entry({ prompts: { rpcCode: -32601 } })).success).toBe(false);
  });
});
