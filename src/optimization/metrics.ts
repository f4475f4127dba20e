// Success rates of a description against a tool's golden prompts, and the promotion rule that
// compares a candidate with the canonical baseline. Pure functions over stored data.
import type { EvalRun, GoldenPrompt, Metrics, PromptCategory, Thresholds } from '../config/index.js';
import { percent, points } from './percent.js';

/** Correct and measured runs of one category. */
interface CategoryCount {
  correct: number;
  total: number;
}

/** Metrics plus the counts they came from. */
export interface MetricsSummary {
  metrics: Metrics;
  counts: Record<PromptCategory, CategoryCount>;
  /** Runs that ended in a backend error; they do not count toward any rate. */
  errors: number;
}

/**
 * Metrics of one description from its runs: only the latest run per current prompt counts, so
 * re-running an evaluation replaces its earlier result and runs of deleted prompts drop out.
 */
export function computeMetrics(runs: readonly EvalRun[], prompts: readonly GoldenPrompt[]): MetricsSummary {
  const promptsById = new Map(prompts.map((prompt) => [prompt.id, prompt]));
  const latest = new Map<string, EvalRun>();
  for (const run of runs) {
    if (!promptsById.has(run.promptId)) continue;
    const previous = latest.get(run.promptId);
    if (!previous || previous.timestamp <= run.timestamp) latest.set(run.promptId, run);
  }
  const counts: Record<PromptCategory, CategoryCount> = {
    direct: { correct: 0, total: 0 },
    indirect: { correct: 0, total: 0 },
    negative: { correct: 0, total: 0 },
  };
  let errors = 0;
  for (const run of latest.values()) {
    if (run.result.error !== undefined) {
      errors++;
      continue;
    }
    const count = counts[promptsById.get(run.promptId)!.category];
    count.total++;
    if (run.result.correct) count.correct++;
  }
  const all = Object.values(counts).reduce((sum, c) => ({ correct: sum.correct + c.correct, total: sum.total + c.total }), {
    correct: 0,
    total: 0,
  });
  return {
    metrics: {
      directSuccess: rate(counts.direct),
      indirectSuccess: rate(counts.indirect),
      negativeSuccess: rate(counts.negative),
      overall: rate(all),
    },
    counts,
    errors,
  };
}

/** The verdict of the promotion rule: `failures` names each threshold that was not met. */
export interface PromotionVerdict {
  promote: boolean;
  failures: string[];
}

const CATEGORY_KEYS = [
  ['direct', 'directSuccess'],
  ['indirect', 'indirectSuccess'],
  ['negative', 'negativeSuccess'],
] as const;

/**
 * The promotion rule: overall ≥ min_overall, negative ≥ min_negative, overall at least
 * min_improvement above the canonical baseline, and no category more than max_regression below it.
 */
export function shouldPromote(candidate: Metrics, baseline: Metrics | null, thresholds: Thresholds): PromotionVerdict {
  const failures: string[] = [];
  if (candidate.overall === null) failures.push('no evaluation runs for this candidate (run_evaluation or record_eval_run first)');
  else if (candidate.overall < thresholds.min_overall)
    failures.push(`min_overall: overall ${percent(candidate.overall)} is below ${percent(thresholds.min_overall)}`);
  if (candidate.negativeSuccess === null) failures.push('min_negative: no negative prompts were evaluated');
  else if (candidate.negativeSuccess < thresholds.min_negative)
    failures.push(`min_negative: negative ${percent(candidate.negativeSuccess)} is below ${percent(thresholds.min_negative)}`);
  if (baseline?.overall === null || baseline === null) {
    failures.push('min_improvement: the canonical baseline was not evaluated (run_evaluation includes it)');
  } else if (candidate.overall !== null) {
    const gain = candidate.overall - baseline.overall;
    if (gain < thresholds.min_improvement - 1e-9)
      failures.push(
        `min_improvement: overall ${percent(candidate.overall)} vs baseline ${percent(baseline.overall)} is ${points(gain, { signed: true })}, needs ${points(thresholds.min_improvement, { signed: true })}`,
      );
    for (const [category, key] of CATEGORY_KEYS) {
      const before = baseline[key];
      const after = candidate[key];
      if (before === null || after === null) continue;
      if (before - after > thresholds.max_regression + 1e-9)
        failures.push(
          `max_regression: ${category} fell from ${percent(before)} to ${percent(after)} (more than ${points(thresholds.max_regression)})`,
        );
    }
  }
  return { promote: failures.length === 0, failures };
}

function rate({ correct, total }: CategoryCount): number | null {
  return total === 0 ? null : correct / total;
}
