// The optimization section of state.json and of servers.yaml: canonical tools, candidates,
// golden prompts, eval runs and promotions per server, and the backend + thresholds settings.
// Shapes only; the optimization layer owns what they mean.
import * as z from 'zod';
import { fileObject } from './fileObject.js';

/** Longest description a candidate may have. */
export const MAX_CANDIDATE_CHARS = 280;
/** The candidate id under which runs of a tool's canonical (original) description are stored. */
export const CANONICAL_CANDIDATE_ID = 'canonical';

/** A tool's original definition, captured once and kept after promotions. */
const CanonicalToolSchema = z.strictObject({
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type CanonicalTool = z.infer<typeof CanonicalToolSchema>;

/** A proposed rewrite of one tool's description. */
const ToolCandidateSchema = z.strictObject({
  id: z.string().min(1),
  toolName: z.string().min(1),
  description: z.string().min(1).max(MAX_CANDIDATE_CHARS),
  example: z.string().optional(),
  charCount: z.number().int().min(1).max(MAX_CANDIDATE_CHARS),
  createdAt: z.string(),
  /** Safety findings accepted with `force`. */
  flags: z.array(z.string()).optional(),
});
export type ToolCandidate = z.infer<typeof ToolCandidateSchema>;

export const PromptCategorySchema = z.enum(['direct', 'indirect', 'negative']);
export type PromptCategory = z.infer<typeof PromptCategorySchema>;

/** A test prompt for one tool, and whether the model should call the tool for it. */
const GoldenPromptSchema = z.strictObject({
  id: z.string().min(1),
  toolName: z.string().min(1),
  category: PromptCategorySchema,
  prompt: z.string().min(10, 'a prompt needs at least 10 characters'),
  expectedBehavior: z.strictObject({ shouldCallTool: z.boolean(), notes: z.string().optional() }),
});
export type GoldenPrompt = z.infer<typeof GoldenPromptSchema>;

/**
 * A golden prompt as a user or agent gives it: a GoldenPrompt with `id`, `toolName` and
 * `expectedBehavior` optional (a new id; the target tool; negative prompts expect no call).
 */
export const PromptInputSchema = GoldenPromptSchema.extend({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a prompt id uses letters, digits, "_" and "-" (at most 64)')
    .optional(),
  toolName: z.string().min(1).optional(),
  expectedBehavior: GoldenPromptSchema.shape.expectedBehavior.optional(),
});
export type PromptInput = z.infer<typeof PromptInputSchema>;

/** What happened when one prompt met one description. */
const EvalResultSchema = z.strictObject({
  toolCalled: z.boolean(),
  correct: z.boolean(),
  error: z.string().optional(),
  reasoning: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
});

/** A result as an agent records it (an EvalRun's result): `correct` may be left to loadout. */
export const EvalResultInputSchema = EvalResultSchema.extend({ correct: z.boolean().optional() });
export type EvalResultInput = z.infer<typeof EvalResultInputSchema>;

/** One evaluation of a candidate (or `canonical`) against one golden prompt. */
const EvalRunSchema = z.strictObject({
  id: z.string().min(1),
  toolName: z.string().min(1),
  candidateId: z.string().min(1),
  promptId: z.string().min(1),
  timestamp: z.string(),
  /** Which backend produced it (`manual` for record_eval_run). */
  backend: z.string().optional(),
  result: EvalResultSchema,
});
export type EvalRun = z.infer<typeof EvalRunSchema>;

/** Success rates (0..1) per category and overall; null when nothing was measured. */
export const MetricsSchema = z.strictObject({
  directSuccess: z.number().min(0).max(1).nullable(),
  indirectSuccess: z.number().min(0).max(1).nullable(),
  negativeSuccess: z.number().min(0).max(1).nullable(),
  overall: z.number().min(0).max(1).nullable(),
});
export type Metrics = z.infer<typeof MetricsSchema>;

/** The active optimization of one tool. */
const PromotedToolSchema = z.strictObject({
  toolName: z.string().min(1),
  candidateId: z.string().min(1),
  description: z.string().min(1),
  promotedAt: z.string(),
  forced: z.boolean().default(false),
  metrics: MetricsSchema,
  baseline: MetricsSchema.nullable().default(null),
});
export type PromotedTool = z.infer<typeof PromotedToolSchema>;

/** Everything optimization keeps for one server. */
export const ServerOptimizationSchema = z.strictObject({
  canonical: z.record(z.string(), CanonicalToolSchema).default({}),
  candidates: z.array(ToolCandidateSchema).default([]),
  prompts: z.array(GoldenPromptSchema).default([]),
  runs: z.array(EvalRunSchema).default([]),
  promotions: z.record(z.string(), PromotedToolSchema).default({}),
});
export type ServerOptimization = z.infer<typeof ServerOptimizationSchema>;

/** The `optimization` section of state.json. */
export const OptimizationStateSchema = z.strictObject({
  servers: z.record(z.string(), ServerOptimizationSchema).default({}),
});

/** The promotion rule's limits (servers.yaml `optimization.thresholds`). */
export const ThresholdsSchema = fileObject({
  min_overall: z.number().min(0).max(1).default(0.85),
  min_negative: z.number().min(0).max(1).default(0.8),
  min_improvement: z.number().min(-1).max(1).default(0.05),
  max_regression: z.number().min(0).max(1).default(0.1),
});
export type Thresholds = z.infer<typeof ThresholdsSchema>;

export const BackendKindSchema = z.enum(['sampling', 'openai', 'command']);
export type BackendKind = z.infer<typeof BackendKindSchema>;

/** `optimization:` in servers.yaml: which model backend evaluates and generates, and the thresholds. */
export const OptimizationSettingsSchema = fileObject({
  backend: BackendKindSchema.optional(),
  /** OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama). */
  base_url: z.string().url().optional(),
  model: z.string().min(1).optional(),
  /** The name of the environment variable holding the API key, never the key. */
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'api_key_env is the name of a variable, e.g. OPENAI_API_KEY')
    .optional(),
  /** Command template run per prompt: argv with {prompt}, {system}, {tools_file}, {tool} placeholders. */
  command: z.array(z.string()).min(1).optional(),
  timeout_seconds: z.number().positive().default(60),
  /** Closest catalog tools (by the search index) added as distractors during evaluation. */
  distractors: z.number().int().min(0).max(50).default(8),
  /**
   * List the optimization meta-tools to agents. Off by default: they add ~3 KB to every session's
   * idle tools/list, and optimizing descriptions is occasional work (`loadout optimize` always works).
   */
  expose_tools: z.boolean().default(false),
  thresholds: ThresholdsSchema.prefault({}),
});
export type OptimizationSettings = z.infer<typeof OptimizationSettingsSchema>;
