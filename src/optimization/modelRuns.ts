// The loop steps that need a model: generating candidates and golden prompts, and running an
// evaluation of candidates (plus the canonical baseline) through a backend.
import type { Catalog } from '../catalog/index.js';
import { CANONICAL_CANDIDATE_ID, type GoldenPrompt, type PromptCategory, type ToolCandidate } from '../config/index.js';
import { LoadoutError, errorMessage, isLoadoutError } from '../shared/index.js';
import type { BackendRequestOptions, ModelBackend } from './backends/modelBackend.js';
import { distractorTools, evaluate, type DescriptionUnderTest, type EvaluationProgress } from './evaluation.js';
import { generateCandidateTexts, generatePromptTexts, type GenerationSubject } from './generators.js';
import type { OptimizationLoop } from './optimizationLoop.js';

/** Generated candidates that were stored, and those the checks refused. */
interface GeneratedCandidates {
  candidates: ToolCandidate[];
  rejected: Array<{ description: string; reason: string }>;
}

/** Generate `count` rewrites through the backend and store those that pass the checks. */
export async function generateCandidates(
  loop: OptimizationLoop,
  backend: ModelBackend,
  server: string,
  tool: string,
  count: number,
  options?: BackendRequestOptions,
): Promise<GeneratedCandidates> {
  const texts = await generateCandidateTexts(backend, await subjectOf(loop, server, tool), count, options);
  const result: GeneratedCandidates = { candidates: [], rejected: [] };
  for (const description of texts) {
    try {
      result.candidates.push(await loop.propose(server, tool, description));
    } catch (error) {
      if (!isLoadoutError(error, 'CANDIDATE_REJECTED')) throw error;
      result.rejected.push({ description, reason: error.message });
    }
  }
  if (!result.candidates.length) {
    throw new LoadoutError(
      'BACKEND_REPLY_INVALID',
      `The ${backend.kind} backend produced no usable candidate: ${result.rejected.map((r) => r.reason).join(' ') || 'it returned none'}`,
    );
  }
  return result;
}

/** Generate golden prompts per category through the backend and save them as the tool's set. */
export async function generateGoldenPrompts(
  loop: OptimizationLoop,
  backend: ModelBackend,
  server: string,
  tool: string,
  counts: Record<PromptCategory, number>,
  options?: BackendRequestOptions,
): Promise<GoldenPrompt[]> {
  const generated = await generatePromptTexts(backend, await subjectOf(loop, server, tool), counts, options);
  const usable = generated.filter((p) => p.prompt.length >= 10);
  if (!usable.length)
    throw new LoadoutError('BACKEND_REPLY_INVALID', `The ${backend.kind} backend produced no prompt of at least 10 characters.`);
  return loop.savePrompts(server, tool, usable);
}

/** What an evaluation request names. */
interface EvaluationRequest {
  server: string;
  tool: string;
  /** Default: every candidate of the tool. */
  candidateIds?: readonly string[];
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
}

/** Run the baseline and the candidates against every golden prompt of the tool; runs are stored per description. */
export async function runEvaluation(
  loop: OptimizationLoop,
  backend: ModelBackend,
  catalog: Catalog,
  request: EvaluationRequest,
): Promise<{ runs: number; candidates: number; prompts: number; ms: number }> {
  const { server, tool } = request;
  const { canonical } = await loop.subject(server, tool);
  const data = await loop.store.server(server);
  const prompts = data.prompts.filter((p) => p.toolName === tool);
  if (!prompts.length)
    throw new LoadoutError(
      'INVALID_ARGUMENT',
      `${server}.${tool} has no golden prompts; save some (save_golden_prompts) or generate them (generate_golden_prompts) first.`,
    );
  const known = data.candidates.filter((c) => c.toolName === tool);
  const unknown = (request.candidateIds ?? []).filter((id) => !known.some((c) => c.id === id));
  if (unknown.length) throw new LoadoutError('INVALID_ARGUMENT', `Unknown candidate ids for ${server}.${tool}: ${unknown.join(', ')}.`);
  const chosen = request.candidateIds ? known.filter((c) => request.candidateIds!.includes(c.id)) : known;
  if (!chosen.length)
    throw new LoadoutError(
      'INVALID_ARGUMENT',
      `${server}.${tool} has no candidates; propose some (propose_candidate) or generate them (generate_candidates) first.`,
    );
  const descriptions: DescriptionUnderTest[] = [
    { candidateId: CANONICAL_CANDIDATE_ID, description: canonical.description },
    ...chosen.map((c) => ({ candidateId: c.id, description: c.description })),
  ];
  const startedAt = performance.now();
  try {
    const runs = await evaluate({
      server,
      tool,
      descriptions,
      prompts,
      distractors: distractorTools(catalog, server, tool, `${tool} ${canonical.description}`, loop.settings.distractors),
      inputSchema: canonical.inputSchema,
      backend,
      signal: request.signal,
      onProgress: request.onProgress,
      onRuns: (batch) => loop.store.addRuns(server, batch),
    });
    return { runs, candidates: chosen.length, prompts: prompts.length, ms: Math.round(performance.now() - startedAt) };
  } catch (error) {
    if (isLoadoutError(error))
      throw new LoadoutError(
        error.code,
        `Evaluation of ${server}.${tool} stopped: ${errorMessage(error)} Runs finished so far were kept.`,
        { cause: error },
      );
    throw error;
  }
}

async function subjectOf(loop: OptimizationLoop, server: string, tool: string): Promise<GenerationSubject> {
  const { canonical, siblings } = await loop.subject(server, tool);
  return { server, tool, canonical, siblings: siblings.map((s) => ({ name: s.name, description: s.description })) };
}
