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
});
