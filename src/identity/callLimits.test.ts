import { describe, expect, it, vi } from 'vitest';
import { LimitsSettingsSchema } from '../config/index.js';
import { CallLimits } from './callLimits.js';

const limitsOf = (settings: unknown, clock: { ms: number }): CallLimits =>
  new CallLimits(LimitsSettingsSchema.parse(settings), () => clock.ms);

describe('CallLimits', () => {
  it('lets every call through when no limit is set', () => {
    const limits = limitsOf({}, { ms: 0 });
    for (let i = 0; i < 1000; i++) expect(limits.take('alice', 'github')).toBeUndefined();
  });

  it("holds a minute's calls per principal, refills evenly, and says how long until the next one", () => {
    const clock = { ms: 0 };
    const limits = limitsOf({ calls_per_minute: 3 }, clock);
    for (let i = 0; i < 3; i++) expect(limits.take('alice')).toBeUndefined();
    expect(limits.take('alice')).toEqual({ limit: 'calls_per_minute', callsPerMinute: 3, retryAfterMs: 20_000 });
    // Another principal has its own minute.
    expect(limits.take('bob')).toBeUndefined();
    clock.ms = 15_000;
    expect(limits.take('alice')?.retryAfterMs).toBe(5000);
    clock.ms = 20_000;
    expect(limits.take('alice')).toBeUndefined();
    expect(limits.take('alice')).toBeDefined();
  });

  it('counts each principal on each server, a named server by its own limit, and counts nothing for a refused call', () => {
    const clock = { ms: 0 };
    const limits = limitsOf({ calls_per_minute: 5, server_calls_per_minute: 2, servers: { github: 1 } }, clock);
    expect(limits.take('alice', 'github')).toBeUndefined();
    expect(limits.take('alice', 'github')).toEqual({
      limit: 'server_calls_per_minute',
      callsPerMinute: 1,
      server: 'github',
      retryAfterMs: 60_000,
    });
    expect(limits.take('alice', 'files')).toBeUndefined();
    expect(limits.take('alice', 'files')).toBeUndefined();
    expect(limits.take('alice', 'files')?.limit).toBe('server_calls_per_minute');
    // Three calls went through; the two refused ones left the principal's minute untouched.
    expect(limits.take('alice')).toBeUndefined();
    expect(limits.take('alice')).toBeUndefined();
    expect(limits.take('alice')?.limit).toBe('calls_per_minute');
  });

  it('counts a call already counted for its principal only on its server', () => {
    const limits = limitsOf({ calls_per_minute: 1, server_calls_per_minute: 5 }, { ms: 0 });
    expect(limits.take('alice')).toBeUndefined();
    expect(limits.take('alice', 'files', { counted: true })).toBeUndefined();
    expect(limits.take('alice', 'files')?.limit).toBe('calls_per_minute');
  });

  it('peeks at the limit a call would pass without counting it', () => {
    const clock = { ms: 0 };
    const limits = limitsOf({ calls_per_minute: 5, server_calls_per_minute: 1 }, clock);
    for (let i = 0; i < 3; i++) expect(limits.peek('alice', 'files')).toBeUndefined();
    expect(limits.take('alice', 'files')).toBeUndefined();
    expect(limits.peek('alice', 'files')).toEqual({
      limit: 'server_calls_per_minute',
      callsPerMinute: 1,
      server: 'files',
      retryAfterMs: 60_000,
    });
    expect(limits.peek('alice')).toBeUndefined();
    clock.ms = 60_000;
    expect(limits.peek('alice', 'files')).toBeUndefined();
    expect(limits.take('alice', 'files')).toBeUndefined();
  });

  it('adopts edited limits at once, keeping what each principal has used', () => {
    const clock = { ms: 0 };
    const limits = limitsOf({ calls_per_minute: 10 }, clock);
    for (let i = 0; i < 5; i++) expect(limits.take('alice')).toBeUndefined();
    limits.update(LimitsSettingsSchema.parse({ calls_per_minute: 6 }));
    expect(limits.take('alice')).toBeUndefined();
    expect(limits.take('alice')?.limit).toBe('calls_per_minute');
    limits.update(LimitsSettingsSchema.parse({ calls_per_minute: 2 }));
    // Six used of a limit of two: the next call is four calls' refill away.
    expect(limits.take('alice')?.retryAfterMs).toBe(150_000);
    limits.update(LimitsSettingsSchema.parse({}));
    expect(limits.take('alice')).toBeUndefined();
  });

  it('sweeps idle buckets at most once a minute, not on each new principal past the bound', () => {
    const clock = { ms: 0 };
    const limits = limitsOf({ calls_per_minute: 10 }, clock);
    for (let i = 0; i < 10_000; i++) limits.take(`p${i}`);
    // Every bucket was used this minute: none can go, so scanning the map for each newcomer is waste.
    const scans = vi.spyOn(Map.prototype, Symbol.iterator);
    try {
      for (let i = 0; i < 200; i++) limits.take(`new${i}`);
      expect(scans.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      scans.mockRestore();
    }
  });

  it('keeps a bucket a lowered limit has overdrawn through a sweep, until it has refilled', () => {
    const clock = { ms: 0 };
    const limits = limitsOf({ calls_per_minute: 100 }, clock);
    for (let i = 0; i < 90; i++) expect(limits.take('alice')).toBeUndefined();
    for (let i = 0; i < 10_000; i++) limits.take(`p${i}`);
    limits.update(LimitsSettingsSchema.parse({ calls_per_minute: 10 }));
    // 90 used of a limit now 10: 80 overdrawn, eight minutes' refill; a minute idle is not enough.
    clock.ms = 61_000;
    expect(limits.take('newcomer')).toBeUndefined();
    expect(limits.take('alice')?.limit).toBe('calls_per_minute');
  });
});
