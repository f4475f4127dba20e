// The products search knows are declared once (productNames.ts): each one's names make it a product
// for the weak-match notice, its other names are searched with it, and its group places a server
// named after it on the map.
import { describe, expect, it } from 'vitest';
import { PRODUCT_WORDS, productAliasesOf } from './productNames.js';
import { groupOf } from './serverGroups.js';

describe('the product names', () => {
  it('give each product its other names, its product words and its group from one declaration', () => {
    expect(productAliasesOf(['google', 'cloud'])).toEqual(expect.arrayContaining(['gcp', 'gcloud']));
    expect(productAliasesOf(['postgres'])).toEqual(expect.arrayContaining(['postgresql', 'psql']));
    for (const word of ['postgres', 'pg', 'pinecone', 'snowflake', 'slack', 'stripe']) expect(PRODUCT_WORDS.has(word), word).toBe(true);
    expect(PRODUCT_WORDS.has('google')).toBe(false);
    // An everyday word that also names a product keeps its aliases and group, but does not make it a product word.
    for (const word of ['resend', 'zoom', 'monday', 'elastic']) expect(PRODUCT_WORDS.has(word), word).toBe(false);
    expect(PRODUCT_WORDS.has('elasticsearch')).toBe(true);
    expect(productAliasesOf(['elastic'])).toContain('elasticsearch');
    expect(groupOf('linear', '')).toBe('tracking');
    expect(groupOf('pinecone', '')).toBe('databases');
    expect(groupOf('snowflake', '')).toBe('databases');
    expect(groupOf('pagerduty', '')).toBe('monitoring');
    expect(groupOf('stripe', '')).toBe('other');
    expect(groupOf('ssh', '')).toBe('cloud');
  });
});
