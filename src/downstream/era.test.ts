import { describe, expect, it } from 'vitest';
import { LEGACY_VERDICT_MAX_AGE_MS, usableVerdict } from './era.js';

describe('usableVerdict', () => {
  const now = Date.parse('2026-08-10T00:00:00Z');
  const dated = (ageMs: number) => new Date(now - ageMs).toISOString();

  it('trusts a modern verdict whatever its age, and a legacy one only while it is fresh', () => {
    const modern = {
      era: 'modern' as const,
      checkedAt: dated(LEGACY_VERDICT_MAX_AGE_MS * 10),
      discover: { supportedVersions: ['2026-07-28'] },
    };
    expect(usableVerdict(modern as never, now)).toBe(modern);
    const fresh = { era: 'legacy' as const, checkedAt: dated(LEGACY_VERDICT_MAX_AGE_MS - 60_000) };
    expect(usableVerdict(fresh, now)).toBe(fresh);
    expect(usableVerdict({ era: 'legacy', checkedAt: dated(LEGACY_VERDICT_MAX_AGE_MS) }, now)).toBeUndefined();
    // A date in the future (a clock set back) or none that parses is no reason to skip the probe.
    expect(usableVerdict({ era: 'legacy', checkedAt: dated(-60_000) }, now)).toBeUndefined();
    expect(usableVerdict({ era: 'legacy', checkedAt: 'yesterday' }, now)).toBeUndefined();
    expect(usableVerdict(undefined, now)).toBeUndefined();
  });
});
