// RelistLearning: what a session learns of its client's re-reads, step by step.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RelistMemory, RememberedHabit } from './clientHabits.js';
import { RelistLearning } from './relistHabit.js';

describe('RelistLearning', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds for an unknown client, and keeps holding once it re-read during a hold', () => {
    const learning = new RelistLearning(() => 'some-client');
    expect(learning.holdsAnswers).toBe(true);
    learning.announced();
    learning.listed();
    learning.released(true);
    expect([learning.habit, learning.holdsAnswers, learning.neverRelists]).toEqual(['relists', true, false]);
  });

  it('stops holding after a hold ran out, and tells a late re-read from none', () => {
    const learning = new RelistLearning(() => undefined);
    learning.announced();
    learning.released(false);
    expect([learning.habit, learning.holdsAnswers, learning.neverRelists]).toEqual(['never', false, true]);
    learning.listed();
    expect([learning.habit, learning.holdsAnswers, learning.neverRelists]).toEqual(['relists-after-answer', false, false]);
  });

  it('learns that a client never re-reads when a change is still unread at the next one', () => {
    vi.useFakeTimers();
    const learning = new RelistLearning(() => 'codex-mcp-client');
    expect([learning.habit, learning.holdsAnswers]).toEqual(['relists-after-answer', false]);
    learning.announced();
    vi.advanceTimersByTime(5000);
    learning.announced();
    expect(learning.neverRelists).toBe(true);
  });

  it('does not count two changes a moment apart as a missed re-read', () => {
    vi.useFakeTimers();
    const learning = new RelistLearning(() => 'some-client');
    learning.announced();
    vi.advanceTimersByTime(10);
    learning.announced();
    expect(learning.habit).toBe('unknown');
  });

  it('gives a client known to fold the list in late a pause after its re-read', () => {
    const learning = new RelistLearning(() => 'gemini-cli-mcp-client');
    expect(learning.holdsAnswers).toBe(true);
    expect(learning.settleMs).toBeGreaterThan(0);
    expect(new RelistLearning(() => 'claude-code').settleMs).toBe(0);
  });

  it("starts from what the client's earlier sessions learned, and keeps only what changed", async () => {
    const kept: RememberedHabit[] = [];
    const memory = (remembered?: RememberedHabit): RelistMemory => ({
      recall: () => Promise.resolve(remembered),
      remember: (habit) => Promise.resolve(void kept.push(habit)),
    });
    const first = new RelistLearning(() => 'some-client', memory());
    expect(await first.recall()).toBe(false);
    first.announced();
    first.released(false);
    await first.remembered();
    expect(kept).toEqual(['never']);

    const next = new RelistLearning(() => 'some-client', memory('never'));
    expect(await next.recall()).toBe(true);
    expect([next.habit, next.holdsAnswers, next.neverRelists]).toEqual(['never', false, true]);
    // It re-reads after all, late: that is kept, and nothing else is written again.
    next.announced();
    next.listed();
    await next.remembered();
    expect(kept).toEqual(['never', 'relists-after-answer']);
    // A client known by name keeps what its name says.
    const known = new RelistLearning(() => 'gemini-cli-mcp-client', memory('never'));
    expect(await known.recall()).toBe(false);
    expect(known.habit).toBe('relists');
  });
});
