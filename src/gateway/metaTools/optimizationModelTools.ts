// Meta-tools that need a model: generate candidates and golden prompts, run an evaluation.
// The backend comes from servers.yaml `optimization:`, or MCP sampling through this client when
// it declared the capability; run_evaluation reports MCP progress when given a progressToken.
import * as z from 'zod';
import {
  createBackend,
  generateCandidates as generate,
  generateGoldenPrompts as generatePrompts,
  runEvaluation as evaluateTool,
  type ModelBackend,
  type SamplingPort,
} from '../../optimization/index.js';
import { jsonResult } from '../toolResults.js';
import { ASKS_MODEL, defineMetaTool, type MetaToolContext } from './metaTool.js';

const server = z.string();
const tool = z.string();
// Range checks as refinements: enforced on every call, but not spelled out in the idle tools/list.
const count = z
  .number()
  .refine((n) => Number.isInteger(n) && n >= 0 && n <= 20, 'a whole number from 0 to 20')
  .optional();

/** generate_candidates: rewrites written by the configured model, stored as candidates. */
export const generateCandidates = defineMetaTool({
  name: 'generate_candidates',
  annotations: ASKS_MODEL,
  changesState: true,
  description: 'Have the configured model write candidates.',
  input: z.strictObject({
    server,
    tool,
    count: z
      .number()
      .refine((n) => Number.isInteger(n) && n >= 1 && n <= 10, 'a whole number from 1 to 10')
      .optional(),
  }),
  example: { server: 'memory', tool: 'read_graph', count: 4 },
  async run(args, context) {
    await context.gateway.ready();
    const model = backendFor(context, args.tool);
    const result = await generate(context.gateway.optimization, model, args.server, args.tool, args.count ?? 4, {
      signal: context.extra.mcpReq.signal,
    });
    return jsonResult({
      candidates: result.candidates.map((c) => ({ candidateId: c.id, charCount: c.charCount, description: c.description })),
      rejected: result.rejected,
    });
  },
});

/** generate_golden_prompts: test prompts written by the configured model. */
export const generateGoldenPrompts = defineMetaTool({
  name: 'generate_golden_prompts',
  // Asks the model and replaces the tool's golden prompts: every default hint holds.
  annotations: {},
  changesState: true,
  description: 'Have the configured model write golden prompts.',
  input: z.strictObject({
    server,
    tool,
    directCount: count,
    indirectCount: count,
    negativeCount: count,
  }),
  example: { server: 'memory', tool: 'read_graph', directCount: 5, indirectCount: 5, negativeCount: 5 },
  async run(args, context) {
    await context.gateway.ready();
    const model = backendFor(context, args.tool);
    const counts = { direct: args.directCount ?? 5, indirect: args.indirectCount ?? 5, negative: args.negativeCount ?? 5 };
    const prompts = await generatePrompts(context.gateway.optimization, model, args.server, args.tool, counts, {
      signal: context.extra.mcpReq.signal,
    });
    return jsonResult({ saved: prompts.length, prompts: prompts.map((p) => ({ promptId: p.id, category: p.category, prompt: p.prompt })) });
  },
});

/** run_evaluation: baseline and candidates against every golden prompt, through the model. */
export const runEvaluation = defineMetaTool({
  name: 'run_evaluation',
  annotations: ASKS_MODEL,
  changesState: true,
  description: 'Score candidates vs the original on the golden prompts.',
  input: z.strictObject({ server, tool, candidateIds: z.array(z.string()).optional() }),
  example: { server: 'memory', tool: 'read_graph' },
  async run(args, context) {
    const { gateway, extra } = context;
    await gateway.ready();
    const model = backendFor(context, args.tool);
    const progressToken = extra.mcpReq._meta?.progressToken;
    const summary = await evaluateTool(gateway.optimization, model, gateway.catalog.current, {
      server: args.server,
      tool: args.tool,
      candidateIds: args.candidateIds,
      signal: extra.mcpReq.signal,
      onProgress:
        progressToken === undefined
          ? undefined
          : ({ done, total, message }) =>
              void extra.mcpReq
                .notify({ method: 'notifications/progress', params: { progressToken, progress: done, total, message } })
                .catch(() => undefined),
    });
    const [results] = await gateway.optimization.results(args.server, { tool: args.tool });
    return jsonResult({
      backend: model.kind,
      ...summary,
      baseline: results?.baseline.metrics,
      candidates: results?.candidates.map((c) => ({
        candidateId: c.candidateId,
        metrics: c.metrics,
        errors: c.errors,
        promotable: c.verdict?.promote,
      })),
    });
  },
});

function backendFor({ gateway, session, extra }: MetaToolContext, toolName: string): ModelBackend {
  const capabilities = session.server.getClientCapabilities();
  const sampling: SamplingPort | undefined = capabilities?.sampling
    ? {
        supportsTools: !!capabilities.sampling.tools,
        createMessage: (params, options) => session.server.createMessage(params, { ...options, relatedRequestId: extra.mcpReq.id }),
      }
    : undefined;
  return createBackend({ settings: gateway.optimization.settings, sampling, toolName });
}
