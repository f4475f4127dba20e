// Human output of `loadout optimize`: the report table (per tool: optimized or not, metrics
// before → after), the results table, and the stderr progress bar shown on a TTY.
import type { Metrics } from '../config/index.js';
import type { EvaluationProgress, OptimizationReport, ToolResults } from '../optimization/index.js';
import { tableClass } from './output.js';

const BAR_WIDTH = 24;

/** The report as terminal tables, one per server. */
export function formatReportTable(reports: readonly OptimizationReport[]): string {
  if (!reports.length) return 'No servers and no optimization data yet.';
  return reports
    .map((report) => {
      const gain = report.avgImprovement === null ? '' : `, average gain ${points(report.avgImprovement)}`;
      const table = new (tableClass())({ head: ['tool', 'status', 'direct', 'indirect', 'negative', 'overall'], style: { head: [], border: [] } });
      for (const tool of report.tools) {
        const mark = tool.status === 'optimized' ? '✓' : '○';
        const cells = (['directSuccess', 'indirectSuccess', 'negativeSuccess', 'overall'] as const).map((key) => change(tool.before, tool.after, key));
        table.push([`${mark} ${tool.name}`, tool.status, ...cells]);
      }
      return `${report.serverName}: ${report.optimizedCount}/${report.toolCount} tools optimized, ${report.totalEvals} runs${gain}\n${table.toString()}`;
    })
    .join('\n\n');
}

/** Candidate metrics beside the baseline, one table per tool. */
export function formatResultsTable(results: readonly ToolResults[]): string {
  if (!results.length) return 'No candidates or golden prompts yet.';
  return results
    .map((tool) => {
      const table = new (tableClass())({ head: ['candidate', 'direct', 'indirect', 'negative', 'overall', 'runs', 'promotable'], style: { head: [], border: [] } });
      const row = (id: string, m: Metrics, runs: number, promotable: string): string[] => [id, rate(m.directSuccess), rate(m.indirectSuccess), rate(m.negativeSuccess), rate(m.overall), String(runs), promotable];
      table.push(row('canonical (baseline)', tool.baseline.metrics, tool.baseline.runs, '–'));
      for (const c of tool.candidates) {
        const promoted = c.candidateId === tool.promotedCandidateId ? ' (promoted)' : '';
        table.push(row(`${c.candidateId}${promoted}`, c.metrics, c.runs, c.verdict?.promote ? 'yes' : `no: ${c.verdict?.failures[0] ?? ''}`));
      }
      return `${tool.tool} (${tool.promptCount} prompts)\n${table.toString()}`;
    })
    .join('\n\n');
}

/** A progress renderer for stderr: a redrawn bar on a TTY, nothing otherwise. */
export function progressBar(stream: NodeJS.WriteStream): { update(progress: EvaluationProgress): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  return {
    update({ done, total, message }) {
      const filled = total ? Math.round((done / total) * BAR_WIDTH) : 0;
      stream.write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${message}\x1b[K`);
    },
    done() {
      stream.write('\r\x1b[K');
    },
  };
}

function change(before: Metrics | null, after: Metrics | null, key: keyof Metrics): string {
  if (!after) return rate(before?.[key] ?? null);
  return `${rate(before?.[key] ?? null)} → ${rate(after[key])}`;
}

function rate(value: number | null): string {
  return value === null ? '–' : `${Math.round(value * 100)}%`;
}

function points(value: number): string {
  return `${value >= 0 ? '+' : ''}${Math.round(value * 100)} points`;
}
