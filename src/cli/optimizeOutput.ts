// Human output of `loadout optimize`: the report table (per tool: optimized or not, metrics
// before → after) and the results table.
import type { Metrics } from '../config/index.js';
import { percent, points, type OptimizationReport, type ToolResults } from '../optimization/index.js';
import { tableClass } from './output.js';

/** The report as terminal tables, one per server. */
export function formatReportTable(reports: readonly OptimizationReport[]): string {
  if (!reports.length) return 'No servers and no optimization data yet.';
  return reports
    .map((report) => {
      const gain = report.avgImprovement === null ? '' : `, average gain ${points(report.avgImprovement, { signed: true })}`;
      const table = new (tableClass())({
        head: ['tool', 'status', 'direct', 'indirect', 'negative', 'overall'],
        style: { head: [], border: [] },
      });
      for (const tool of report.tools) {
        const mark = tool.status === 'optimized' ? '✓' : '○';
        const cells = (['directSuccess', 'indirectSuccess', 'negativeSuccess', 'overall'] as const).map((key) =>
          change(tool.before, tool.after, key),
        );
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
      const table = new (tableClass())({
        head: ['candidate', 'direct', 'indirect', 'negative', 'overall', 'runs', 'promotable'],
        style: { head: [], border: [] },
      });
      const row = (id: string, m: Metrics, runs: number, promotable: string): string[] => [
        id,
        percent(m.directSuccess),
        percent(m.indirectSuccess),
        percent(m.negativeSuccess),
        percent(m.overall),
        String(runs),
        promotable,
      ];
      table.push(row('canonical (baseline)', tool.baseline.metrics, tool.baseline.runs, '–'));
      for (const c of tool.candidates) {
        const promoted = c.candidateId === tool.promotedCandidateId ? ' (promoted)' : '';
        table.push(
          row(`${c.candidateId}${promoted}`, c.metrics, c.runs, c.verdict?.promote ? 'yes' : `no: ${c.verdict?.failures[0] ?? ''}`),
        );
      }
      return `${tool.tool} (${tool.promptCount} prompts)\n${table.toString()}`;
    })
    .join('\n\n');
}

function change(before: Metrics | null, after: Metrics | null, key: keyof Metrics): string {
  if (!after) return percent(before?.[key] ?? null);
  return `${percent(before?.[key] ?? null)} → ${percent(after[key])}`;
}
