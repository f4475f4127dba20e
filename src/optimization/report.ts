// The optimization report: per server, which tools are optimized and their metrics
// before (canonical baseline) and after (promoted candidate). Built from stored data only.
import * as z from 'zod';
import { CANONICAL_CANDIDATE_ID, MetricsSchema, type ServerOptimization } from '../config/index.js';
import { computeMetrics } from './metrics.js';

/** One tool's line in the report. */
const ToolReportSchema = z.strictObject({
  name: z.string(),
  status: z.enum(['optimized', 'baseline', 'unoptimized']),
  candidateCount: z.number().int(),
  promptCount: z.number().int(),
  before: MetricsSchema.nullable(),
  after: MetricsSchema.nullable(),
  promotedAt: z.string().optional(),
  canonicalDescription: z.string().optional(),
  description: z.string().optional(),
});
export type ToolReport = z.infer<typeof ToolReportSchema>;

/** The report for one server. */
export const OptimizationReportSchema = z.strictObject({
  serverName: z.string(),
  toolCount: z.number().int(),
  optimizedCount: z.number().int(),
  totalEvals: z.number().int(),
  /** Mean overall gain (0..1) of the optimized tools over their baselines; null when none. */
  avgImprovement: z.number().nullable(),
  tools: z.array(ToolReportSchema),
});
export type OptimizationReport = z.infer<typeof OptimizationReportSchema>;

/** Build a server's report from its stored data and the names of its catalog tools. */
export function buildReport(serverName: string, data: ServerOptimization, catalogToolNames: readonly string[]): OptimizationReport {
  const names = [...new Set([...catalogToolNames, ...Object.keys(data.canonical), ...Object.keys(data.promotions)])];
  const tools = names.map((name): ToolReport => {
    const prompts = data.prompts.filter((p) => p.toolName === name);
    const baselineRuns = data.runs.filter((r) => r.toolName === name && r.candidateId === CANONICAL_CANDIDATE_ID);
    const baseline = baselineRuns.length ? computeMetrics(baselineRuns, prompts).metrics : null;
    const promoted = data.promotions[name];
    const canonicalDescription = data.canonical[name]?.description;
    return {
      name,
      status: promoted ? 'optimized' : baseline ? 'baseline' : 'unoptimized',
      candidateCount: data.candidates.filter((c) => c.toolName === name).length,
      promptCount: prompts.length,
      before: promoted?.baseline ?? baseline,
      after: promoted?.metrics ?? null,
      ...(promoted ? { promotedAt: promoted.promotedAt, description: promoted.description } : {}),
      ...(canonicalDescription !== undefined ? { canonicalDescription } : {}),
    };
  });
  const gains = tools.flatMap((t) => (t.after?.overall != null && t.before?.overall != null ? [t.after.overall - t.before.overall] : []));
  return {
    serverName,
    toolCount: tools.length,
    optimizedCount: tools.filter((t) => t.status === 'optimized').length,
    totalEvals: data.runs.length,
    avgImprovement: gains.length ? gains.reduce((a, b) => a + b, 0) / gains.length : null,
    tools,
  };
}
