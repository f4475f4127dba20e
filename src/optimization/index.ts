// optimization: tool-description optimization — candidates, golden prompts, evaluation through
// model backends, the promotion rule, promotions applied to the catalog, and the report.
export { OptimizationStore } from './optimizationStore.js';
export { OptimizationLoop, type OptimizationLoopOptions, type PromptInput, type ToolResults, type DescriptionResults } from './optimizationLoop.js';
export { computeMetrics, shouldPromote, pct, type MetricsSummary, type PromotionVerdict, type CategoryCount } from './metrics.js';
export { findInjectionPatterns, SAFETY_CHECK_NAMES } from './safety.js';
export { generateCandidates, generateGoldenPrompts, runEvaluation, type EvaluationRequest, type GeneratedCandidates } from './modelRuns.js';
export { distractorTools, evaluate, MAX_CONSECUTIVE_FAILURES, type EvaluationProgress, type EvaluationPlan, type DescriptionUnderTest } from './evaluation.js';
export { buildReport, OptimizationReportSchema, ToolReportSchema, type OptimizationReport, type ToolReport } from './report.js';
export { renderReportHtml } from './reportHtml.js';
export { createBackend, type BackendSources } from './backends/createBackend.js';
export { OpenAiBackend, type OpenAiBackendOptions } from './backends/openaiBackend.js';
export { CommandBackend, COMMAND_TEMPLATE_VARIABLES, type CommandBackendOptions } from './backends/commandBackend.js';
export { SamplingBackend, type SamplingPort } from './backends/samplingBackend.js';
export { EVAL_SYSTEM_PROMPT, type ModelBackend, type EvalTool, type ToolChoice, type BackendRequestOptions } from './backends/modelBackend.js';
export { watchPromotions } from './promotionWatch.js';
