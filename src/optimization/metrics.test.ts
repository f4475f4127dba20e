import { describe, expect, it } from 'vitest';
import { ThresholdsSchema, type EvalRun, type GoldenPrompt, type Metrics } from '../config/index.js';
import { computeMetrics, shouldPromote } from './metrics.js';

const thresholds = ThresholdsSchema.parse({});

function prompt(id: string, category: GoldenPrompt['category']): GoldenPrompt {
  return { id, toolName: 't', category, prompt: 'a prompt long enough', expectedBehavior: { shouldCallTool: category !== 'negative' } };
}

function run(promptId: string, correct: boolean, timestamp = '2026-01-01T00:00:00.000Z', error?: string): EvalRun {
  return {
    id: `${promptId}-${timestamp}`,
    toolName: 't',
    candidateId: 'c',
    promptId,
    timestamp,
    result: { toolCalled: correct, correct, ...(error ? { error } : {}) },
  };
}

const metrics = (d: number | null, i: number | null, n: number | null, o: number | null): Metrics => ({
  directSuccess: d,
  indirectSuccess: i,
  negativeSuccess: n,
  overall: o,
});

describe('computeMetrics', () => {
  const prompts = [prompt('d1', 'direct'), prompt('d2', 'direct'), prompt('i1', 'indirect'), prompt('n1', 'negative')];

  it('gives success rates per category and overall', () => {
    const summary = computeMetrics([run('d1', true), run('d2', false), run('i1', true), run('n1', true)], prompts);
    expect(summary.metrics).toEqual(metrics(0.5, 1, 1, 0.75));
    expect(summary.counts.direct).toEqual({ correct: 1, total: 2 });
  });

  it('counts only the latest run per prompt and ignores runs of prompts no longer saved', () => {
    const summary = computeMetrics(
      [run('d1', false, '2026-01-01T00:00:00.000Z'), run('d1', true, '2026-01-02T00:00:00.000Z'), run('gone', false)],
      prompts,
    );
    expect(summary.metrics).toEqual(metrics(1, null, null, 1));
  });

  it('leaves errored runs out of every rate and counts them', () => {
    const summary = computeMetrics([run('d1', true), run('d2', false, undefined, 'timeout')], prompts);
    expect(summary.metrics.directSuccess).toBe(1);
    expect(summary.errors).toBe(1);
  });
});

describe('shouldPromote', () => {
  const baseline = metrics(0.6, 0.6, 0.9, 0.7);

  it('promotes a candidate that clears every threshold', () => {
    expect(shouldPromote(metrics(1, 0.9, 0.9, 0.93), baseline, thresholds)).toEqual({ promote: true, failures: [] });
  });

  it('names min_overall when overall is too low', () => {
    const verdict = shouldPromote(metrics(0.8, 0.8, 0.9, 0.83), metrics(0.5, 0.5, 0.9, 0.6), thresholds);
    expect(verdict.promote).toBe(false);
    expect(verdict.failures.join()).toMatch(/^min_overall: overall 83% is below 85%/);
  });

  it('names min_negative when precision is too low', () => {
    const verdict = shouldPromote(metrics(1, 1, 0.75, 0.92), metrics(0.5, 0.5, 0.75, 0.6), thresholds);
    expect(verdict.failures).toEqual(['min_negative: negative 75% is below 80%']);
  });

  it('names min_improvement when the gain over the baseline is too small', () => {
    const verdict = shouldPromote(metrics(0.9, 0.9, 0.9, 0.9), metrics(0.9, 0.9, 0.85, 0.88), thresholds);
    expect(verdict.failures).toEqual(['min_improvement: overall 90% vs baseline 88% is +2 points, needs +5 points']);
  });

  it('names max_regression when a category falls more than allowed', () => {
    const verdict = shouldPromote(metrics(1, 0.8, 1, 0.93), metrics(0.5, 0.95, 0.8, 0.75), thresholds);
    expect(verdict.failures).toEqual(['max_regression: indirect fell from 95% to 80% (more than 10 points)']);
  });

  it('refuses without a baseline or without runs, saying what to do', () => {
    expect(shouldPromote(metrics(1, 1, 1, 1), null, thresholds).failures.join()).toMatch(/baseline was not evaluated/);
    expect(shouldPromote(metrics(null, null, null, null), baseline, thresholds).failures[0]).toMatch(/no evaluation runs/);
  });

  it('uses configured thresholds', () => {
    const lenient = ThresholdsSchema.parse({ min_overall: 0.5, min_negative: 0, min_improvement: 0, max_regression: 1 });
    expect(shouldPromote(metrics(0.5, 0.5, 0.5, 0.5), metrics(0.5, 0.5, 0.5, 0.5), lenient).promote).toBe(true);
  });
});
