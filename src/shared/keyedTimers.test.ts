import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyedTimers } from './keyedTimers.js';

afterEach(() => vi.useRealTimers());

describe('KeyedTimers', () => {
  it('restarts a key set again: one run, of the latest task, a full delay after the last set', () => {
    vi.useFakeTimers();
    const timers = new KeyedTimers();
    const runs: string[] = [];
    timers.set('git', 1000, () => runs.push('first'));
    vi.advanceTimersByTime(800);
    timers.set('git', 1000, () => runs.push('second'));
    vi.advanceTimersByTime(800);
    expect(runs).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(runs).toEqual(['second']);
    expect(timers.has('git')).toBe(false);
  });

  it('replaces a timer set with another delay, and runs nothing once cleared', () => {
    vi.useFakeTimers();
    const timers = new KeyedTimers();
    const runs: string[] = [];
    timers.set('git', 1000, () => runs.push('long'));
    timers.set('git', 100, () => runs.push('short'));
    timers.set('db', 100, () => runs.push('db'));
    timers.clear('db');
    vi.advanceTimersByTime(2000);
    expect(runs).toEqual(['short']);
  });

  it('runs a key set again many times once, a full delay after the last set, and an earlier set sooner', () => {
    vi.useFakeTimers();
    const timers = new KeyedTimers();
    const runs: number[] = [];
    for (let step = 0; step < 5; step++) {
      timers.set('idle', 1000, () => runs.push(performance.now()));
      vi.advanceTimersByTime(700);
    }
    // Last set at 2800 (it is 3500 now): due at 3800, not when the first timer would have fired.
    vi.advanceTimersByTime(299);
    expect(runs).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(runs).toEqual([3800]);
    timers.set('idle', 5000, () => runs.push(performance.now()));
    timers.set('idle', 100, () => runs.push(performance.now()));
    vi.advanceTimersByTime(10_000);
    expect(runs).toEqual([3800, 3900]);
  });

  it('waits out a delay longer than a Node timer can hold (~24.8 days), never setting one past that', () => {
    vi.useFakeTimers();
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const timers = new KeyedTimers();
    const runs: string[] = [];
    const dayMs = 24 * 3_600_000;
    timers.set('idle', 40 * dayMs, () => runs.push('idle'));
    vi.advanceTimersByTime(40 * dayMs - 1);
    expect(runs).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(runs).toEqual(['idle']);
    expect(Math.max(...setTimeoutSpy.mock.calls.map(([, delayMs]) => delayMs ?? 0))).toBeLessThanOrEqual(2 ** 31 - 1);
  });
});
