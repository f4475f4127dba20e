// Pure statistics for the benchmark: percentiles, summaries and ratios of millisecond samples.
// No I/O here, so the unit test can check it without spawning anything.

/** p50/p99 (and friends) of a sample set, in the samples' unit. */
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  min: number;
  mean: number;
}

/** The `p`-th percentile (0–100) of `samples` by nearest rank; NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Summary of a sample set. */
export function summarize(samples: readonly number[]): Summary {
  const sum = samples.reduce((total, value) => total + value, 0);
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    min: samples.length ? Math.min(...samples) : Number.NaN,
    mean: samples.length ? sum / samples.length : Number.NaN,
  };
}

/** `value / limit`, the figure the targets are written against. */
export function ratio(value: number, limit: number): number {
  return limit > 0 ? value / limit : Number.NaN;
}

/** Milliseconds with a precision that suits the magnitude (0.042, 1.37, 153). */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (Math.abs(ms) < 1) return `${ms.toFixed(3)} ms`;
  if (Math.abs(ms) < 100) return `${ms.toFixed(2)} ms`;
  return `${Math.round(ms)} ms`;
}

/** Bytes as KiB/MiB for the table. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Time one async operation in milliseconds. */
export async function timeMs(operation: () => Promise<unknown>): Promise<number> {
  const startedAt = performance.now();
  await operation();
  return performance.now() - startedAt;
}
