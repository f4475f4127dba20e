// Meta-tools of the stored optimization loop: canonical tools, candidates, golden prompts, manual
// eval runs, results, promotion, revert, report. Each answers with one JSON object; descriptions
// stay one short sentence because every one of them is in the idle tools/list.
import * as z from 'zod';
import { EvalResultInputSchema, PromptInputSchema } from '../../config/index.js';
import { jsonResult } from '../toolResults.js';
import { DELETES, READS_ONLY, SAVES, defineMetaTool } from './metaTool.js';

const server = z.string();
const tool = z.string();

/** get_canonical_tools: the original definitions, kept after promotions. */
export const getCanonicalTools = defineMetaTool({
  name: 'get_canonical_tools',
  annotations: READS_ONLY,
  description: "A server's original tool descriptions and schemas.",
  input: z.strictObject({ server }),
  example: { server: 'memory' },
  async run(args, { gateway }) {
    await gateway.ready();
    const canonical = await gateway.optimization.canonical(args.server);
    return jsonResult({ server: args.server, tools: Object.entries(canonical).map(([name, t]) => ({ name, ...t })) });
  },
});

/** propose_candidate: store a rewritten description. */
export const proposeCandidate = defineMetaTool({
  name: 'propose_candidate',
  annotations: SAVES,
  changesState: true,
  description: 'Store a rewritten description (max 280 chars) to evaluate.',
  input: z.strictObject({ server, tool, description: z.string(), example: z.string().optional(), force: z.boolean().optional() }),
  example: {
    server: 'memory',
    tool: 'read_graph',
    description: 'Read the whole knowledge graph. Use to recall stored entities and relations.',
  },
  async run(args, { gateway }) {
    await gateway.ready();
    const candidate = await gateway.optimization.propose(args.server, args.tool, args.description, {
      example: args.example,
      force: args.force,
    });
    return jsonResult({
      candidateId: candidate.id,
      charCount: candidate.charCount,
      ...(candidate.flags ? { flags: candidate.flags } : {}),
    });
  },
});

/** save_golden_prompts: replace a tool's test prompts. */
export const saveGoldenPrompts = defineMetaTool({
  name: 'save_golden_prompts',
  annotations: DELETES,
  changesState: true,
  description: "Replace a tool's golden test prompts.",
  input: z.strictObject({
    server,
    tool,
    // Seed 002's GoldenPrompt; id, toolName and expectedBehavior may be left out.
    prompts: z.array(PromptInputSchema).refine((list) => list.length > 0, 'give at least one prompt'),
  }),
  example: { server: 'memory', tool: 'read_graph', prompts: [{ category: 'direct', prompt: 'Show me everything in my knowledge graph' }] },
  async run(args, { gateway }) {
    await gateway.ready();
    const prompts = await gateway.optimization.savePrompts(args.server, args.tool, args.prompts);
    return jsonResult({
      saved: prompts.length,
      prompts: prompts.map((p) => ({ promptId: p.id, category: p.category, shouldCallTool: p.expectedBehavior.shouldCallTool })),
    });
  },
});

/** record_eval_run: the manual path, the agent's own result for one prompt. */
export const recordEvalRun = defineMetaTool({
  name: 'record_eval_run',
  annotations: SAVES,
  changesState: true,
  description: 'Record if a prompt made you call the tool; candidateId canonical = original.',
  input: z.strictObject({
    server,
    candidateId: z.string(),
    promptId: z.string(),
    // Seed 002's EvalRun result: correct may be left out (computed), never contradict the run.
    result: EvalResultInputSchema,
  }),
  example: { server: 'memory', candidateId: 'V1StGXR8_Z5jdHi6B-myT', promptId: 'x3ZfG2k9LmQpR7sT1uVwA', result: { toolCalled: true } },
  async run(args, { gateway }) {
    const run = await gateway.optimization.recordRun(args.server, args.candidateId, args.promptId, args.result);
    return jsonResult({
      runId: run.id,
      correct: run.result.correct,
      ...(args.result.correct === undefined ? { correctComputed: true } : {}),
    });
  },
});

/** get_eval_results: metrics per candidate beside the canonical baseline. */
export const getEvalResults = defineMetaTool({
  name: 'get_eval_results',
  annotations: READS_ONLY,
  description: 'Metrics per candidate beside the canonical baseline.',
  input: z.strictObject({ server, tool: tool.optional(), candidateId: z.string().optional() }),
  example: { server: 'memory', tool: 'read_graph' },
  async run(args, { gateway }) {
    return jsonResult({ server: args.server, tools: await gateway.optimization.results(args.server, args) });
  },
});

/** promote_candidate: make a candidate the live description. */
export const promoteCandidate = defineMetaTool({
  name: 'promote_candidate',
  annotations: SAVES,
  changesState: true,
  description: 'Make a candidate live if it passes the thresholds.',
  input: z.strictObject({ server, tool, candidateId: z.string(), force: z.boolean().optional() }),
  example: { server: 'memory', tool: 'read_graph', candidateId: 'V1StGXR8_Z5jdHi6B-myT' },
  async run(args, { gateway }) {
    await gateway.ready();
    const { verdict, results, baseline } = await gateway.optimization.promote(args.server, args.tool, args.candidateId, args.force);
    return jsonResult({
      promoted: true,
      tool: `${args.server}.${args.tool}`,
      candidateId: args.candidateId,
      description: results.description,
      metrics: results.metrics,
      baseline: baseline.metrics,
      ...(verdict.failures.length ? { forced: true, failures: verdict.failures } : {}),
    });
  },
});

/** revert_optimization: back to the canonical description. */
export const revertOptimization = defineMetaTool({
  name: 'revert_optimization',
  annotations: SAVES,
  changesState: true,
  description: "Restore a tool's original description.",
  input: z.strictObject({ server, tool }),
  example: { server: 'memory', tool: 'read_graph' },
  async run(args, { gateway }) {
    const description = await gateway.optimization.revert(args.server, args.tool);
    return jsonResult({ reverted: true, tool: `${args.server}.${args.tool}`, description });
  },
});

/** get_optimization_report: optimized tools and metrics before → after. */
export const getOptimizationReport = defineMetaTool({
  name: 'get_optimization_report',
  annotations: READS_ONLY,
  description: 'Which tools are optimized, with metrics before and after.',
  input: z.strictObject({ server: server.optional() }),
  example: { server: 'memory' },
  async run(args, { gateway }) {
    await gateway.ready();
    return jsonResult({ reports: await gateway.optimization.report(args.server) });
  },
});
