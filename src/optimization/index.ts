// optimization: tool-description optimization — candidates, golden prompts, evaluation through
// model backends, the promotion rule, promotions applied to the catalog, and the report.
export { OptimizationStore } from './optimizationStore.js';
export { OptimizationLoop, type PromptInput, type ToolResults } from './optimizationLoop.js';
export { generateCandidates, generateGoldenPrompts, runEvaluation } from './modelRuns.js';
export { type EvaluationProgress } from './evaluation.js';
export { type OptimizationReport } from './report.js';
export { renderReportHtml } from './reportHtml.js';
export { percent, points } from './percent.js';
export { createBackend } from './backends/createBackend.js';
export { OpenAiBackend } from './backends/openaiBackend.js';
export { CommandBackend, COMMAND_TEMPLATE_VARIABLES } from './backends/commandBackend.js';
export { type SamplingPort } from './backends/samplingBackend.js';
export { type ModelBackend, type EvalTool } from './backends/modelBackend.js';
export { watchPromotions } from './promotionWatch.js';
