// Runs descriptions against golden prompts through a model backend: each prompt is sent with a
// realistic tool list (the description under test among distractors) and the run records whether
// the model called the tool. Persisting the runs is the caller's job (onRuns).
import type { Catalog } from '../catalog/index.js';
import type { EvalRun, GoldenPrompt } from '../config/index.js';
import { CLIENT_TOOL_NAME_LIMIT, flattenToolName } from '../registry/index.js';
import { errorMessage, isLoadoutError } from '../shared/index.js';
import { newId } from './optimizationStore.js';
import { backendUnavailable, type EvalTool, type ModelBackend } from './backends/modelBackend.js';

/** A failing streak this long means the backend is not really working: stop instead of burning time. */
const MAX_CONSECUTIVE_FAILURES = 3;

/** A description to evaluate: a candidate, or the canonical text under the id `canonical`. */
export interface DescriptionUnderTest {
  candidateId: string;
  description: string;
}

/** Progress of an evaluation, for progress bars and MCP progress notifications. */
export interface EvaluationProgress {
  done: number;
  total: number;
  message: string;
}

/** Everything one evaluation needs. */
interface EvaluationPlan {
  server: string;
  tool: string;
  descriptions: readonly DescriptionUnderTest[];
  prompts: readonly GoldenPrompt[];
  /** The other tools shown to the model (see distractorTools). */
  distractors: readonly EvalTool[];
  inputSchema: Record<string, unknown>;
  backend: ModelBackend;
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
  /** Receives each description's runs when it is done (and the partial batch if the run stops). */
  onRuns: (runs: EvalRun[]) => Promise<void>;
}

/** Evaluate every description against every prompt, in order. Returns the number of runs made. */
export async function evaluate(plan: EvaluationPlan): Promise<number> {
  const target = flattenToolName(`${plan.server}.${plan.tool}`, CLIENT_TOOL_NAME_LIMIT);
  const total = plan.descriptions.length * plan.prompts.length;
  let done = 0;
  let failures = 0;
  for (const [index, described] of plan.descriptions.entries()) {
    const label = described.candidateId === 'canonical' ? 'baseline (canonical)' : `candidate ${index}/${plan.descriptions.length - 1}`;
    const tools: EvalTool[] = [{ name: target, description: described.description, inputSchema: plan.inputSchema }, ...plan.distractors];
    const runs: EvalRun[] = [];
    try {
      for (const prompt of plan.prompts) {
        plan.onProgress?.({ done, total, message: `Testing ${label} … ${Math.floor((done / total) * 100)}%` });
        const run = await runOne(plan, described.candidateId, prompt, shuffleFor(prompt.id, tools), target);
        runs.push(run);
        done++;
        failures = run.result.error === undefined ? 0 : failures + 1;
        if (failures >= MAX_CONSECUTIVE_FAILURES) {
          throw backendUnavailable(
            `${MAX_CONSECUTIVE_FAILURES} prompts in a row failed through the ${plan.backend.kind} backend; last: ${run.result.error}`,
          );
        }
      }
    } finally {
      await plan.onRuns(runs);
    }
  }
  plan.onProgress?.({ done, total, message: 'Done … 100%' });
  return done;
}

async function runOne(
  plan: EvaluationPlan,
  candidateId: string,
  prompt: GoldenPrompt,
  tools: EvalTool[],
  target: string,
): Promise<EvalRun> {
  const startedAt = performance.now();
  const base = { id: newId(), toolName: plan.tool, candidateId, promptId: prompt.id, backend: plan.backend.kind };
  const durationMs = (): number => Math.round(performance.now() - startedAt);
  try {
    const choice = await plan.backend.chooseTools(prompt.prompt, tools, { signal: plan.signal });
    const toolCalled = choice.calledTools.some((name) => name === target || name.endsWith(`__${target}`));
    const reasoning = choice.text?.slice(0, 500);
    return {
      ...base,
      timestamp: new Date().toISOString(),
      result: {
        toolCalled,
        correct: toolCalled === prompt.expectedBehavior.shouldCallTool,
        durationMs: durationMs(),
        ...(reasoning ? { reasoning } : {}),
      },
    };
  } catch (error) {
    if (!isLoadoutError(error, 'BACKEND_REPLY_INVALID')) throw error;
    return {
      ...base,
      timestamp: new Date().toISOString(),
      result: { toolCalled: false, correct: false, error: errorMessage(error), durationMs: durationMs() },
    };
  }
}

/**
 * The tools shown beside the one under test: the other enabled tools of its server and the
 * catalog tools closest to it by the search index, at most `limit` from other servers.
 */
export function distractorTools(catalog: Catalog, server: string, tool: string, query: string, limit: number): EvalTool[] {
  const id = `${server}.${tool}`;
  const sameServer = catalog.visible().filter((t) => t.server === server && t.id !== id);
  const nearby =
    limit > 0
      ? catalog
          .search({ query, limit: limit + sameServer.length + 1, offset: 0 })
          .tools.filter((t) => t.server !== server)
          .slice(0, limit)
      : [];
  return [...sameServer, ...nearby].map((t) => ({
    name: flattenToolName(t.id, CLIENT_TOOL_NAME_LIMIT),
    description: t.description,
    inputSchema: t.definition.inputSchema,
  }));
}

// Models favour the first tools listed; a fixed per-prompt order spreads that bias evenly and
// keeps candidates comparable (every description sees the same order for the same prompt).
function shuffleFor(seed: string, tools: readonly EvalTool[]): EvalTool[] {
  let state = [...seed].reduce((hash, char) => (Math.imul(hash, 31) + char.charCodeAt(0)) | 0, 7);
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) | 0;
    return (state >>> 0) / 2 ** 32;
  };
  const order = [...tools];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
