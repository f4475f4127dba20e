// The optimization meta-tools in listing order (the loop's order), kept apart so META_TOOLS
// gains them with one line.
import type { MetaTool } from './metaTool.js';
import { generateCandidates, generateGoldenPrompts, runEvaluation } from './optimizationModelTools.js';
import {
  getCanonicalTools,
  getEvalResults,
  getOptimizationReport,
  promoteCandidate,
  proposeCandidate,
  recordEvalRun,
  revertOptimization,
  saveGoldenPrompts,
} from './optimizationTools.js';

/** Every optimization meta-tool. */
export const OPTIMIZATION_META_TOOLS: readonly MetaTool[] = [
  getCanonicalTools,
  generateCandidates,
  proposeCandidate,
  generateGoldenPrompts,
  saveGoldenPrompts,
  runEvaluation,
  recordEvalRun,
  getEvalResults,
  promoteCandidate,
  revertOptimization,
  getOptimizationReport,
];
