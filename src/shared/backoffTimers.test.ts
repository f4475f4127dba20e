// Backoff: delays that double up to a cap with jitter, and retries by key that reset when they work.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackoffTimers, backoffDelayMs } from './backoffTimers.js';

describe('backoffDelayMs', () => {
  it('doubles from the base and never exceeds the cap', () => {
    const full = () => 0.999999;
    expect(backoffDelayMs(0, 1000, 60_000, full)).toBe(1000);
    expect(backoffDelayMs(1, 1000, 60_000, full)).toBe(2000);
    expect(backoffDelayMs(5, 1000, 60_000, full)).toBe(32_000);
    expect(backoffDelayMs(6, 1000, 60_000, full)).toBe(60_000);
    expect(backoffDelayMs(500, 1000, 60_000, full)).toBe(60_000);
  });

  it('jitters between half and all of the delay', () => {
    expect(backoffDelayMs(3, 1000, 60_000, () => 0)).toBe(4000);
    expect(backoffDelayMs(3, 1000, 60_000, () => 0.5)).toBe(6000);
  });
});

describe('BackoffTimers', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const noJitter = () => 0.999999;

  it('waits longer for each attempt of a key, and the base delay again after a reset', () => {
    const timers = new BackoffTimers(100, 1000, noJitter);
    const runs: string[] = [];
    expect(timers.schedule('a', () => runs.push('a1'))).toEqual({ attempt: 1, delayMs: 100 });
    vi.advanceTimersByTime(100);
    expect(runs).toEqual(['a1']);
    expect(timers.has('a')).toBe(false);
    expect(timers.keys()).toEqual(['a']);
    expect(timers.schedule('a', () => runs.push('a2'))).toEqual({ attempt: 2, delayMs: 200 });
    timers.cancel('a');
    vi.advanceTimersByTime(1000);
    expect(runs).toEqual(['a1']);
    expect(timers.schedule('a', () => runs.push('a3'))).toEqual({ attempt: 3, delayMs: 400 });
    timers.reset('a');
    expect(timers.keys()).toEqual([]);
    expect(timers.schedule('a', () => runs.push('a4'))).toEqual({ attempt: 1, delayMs: 100 });
    timers.clearAll();
    vi.advanceTimersByTime(1000);
    expect(runs).toEqual(['a1']);
    expect(timers.keys()).toEqual([]);
  });
});
