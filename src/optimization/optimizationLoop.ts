// The optimization loop over stored data: canonical capture, candidates, golden prompts, manual
// eval runs, results, promotion and revert. Promotions reach every session through the catalog's
// description overrides (one rebuild → each affected session announces one list_changed).
import type { CatalogStore, CatalogTool } from '../catalog/index.js';
import {
  CANONICAL_CANDIDATE_ID,
  MAX_CANDIDATE_CHARS,
  type CanonicalTool,
  type EvalResultInput,
  type EvalRun,
  type GoldenPrompt,
  type PromptInput,
  type OptimizationSettings,
  type ServerOptimization,
  type ToolCandidate,
} from '../config/index.js';
import { LoadoutError } from '../shared/index.js';
import { computeMetrics, shouldPromote, type MetricsSummary, type PromotionVerdict } from './metrics.js';
import { newId, type OptimizationStore } from './optimizationStore.js';
import { buildReport, type OptimizationReport } from './report.js';
import { findInjectionPatterns } from './safety.js';

/** A golden prompt as callers submit it (id, tool and expectation filled in when left out). */
export type { PromptInput };

/** One description's results against a tool's prompts. */
interface DescriptionResults extends MetricsSummary {
  candidateId: string;
  description: string;
  runs: number;
  verdict?: PromotionVerdict;
}

/** Results of one tool: the canonical baseline and each candidate. */
export interface ToolResults {
  tool: string;
  promptCount: number;
  promotedCandidateId: string | null;
  baseline: DescriptionResults;
  candidates: DescriptionResults[];
}

/** Everything the loop needs. */
interface OptimizationLoopOptions {
  store: OptimizationStore;
  catalog: CatalogStore;
  settings: OptimizationSettings;
}

/** The stored-data side of tool-description optimization. */
export class OptimizationLoop {
  readonly store: OptimizationStore;
  readonly settings: OptimizationSettings;
  readonly #catalog: CatalogStore;
  #applied: ReadonlyMap<string, string> = new Map();

  constructor(options: OptimizationLoopOptions) {
    this.store = options.store;
    this.settings = options.settings;
    this.#catalog = options.catalog;
  }

  /** Push the stored promotions into the catalog (at start, after any change); a no-op when nothing changed. */
  async applyPromotions(): Promise<boolean> {
    const next = await this.store.promotedDescriptions();
    if (sameEntries(next, this.#applied)) return false;
    this.#applied = next;
    this.#catalog.setDescriptionOverrides(next);
    return true;
  }

  /** The server's original tool definitions, capturing any not captured yet. */
  async canonical(server: string): Promise<Record<string, CanonicalTool>> {
    const tools = this.#serverTools(server);
    const captured = Object.fromEntries(
      tools.map((t) => [t.name, { description: t.definition.description ?? '', inputSchema: t.definition.inputSchema }]),
    );
    return (await this.store.captureCanonical(server, captured)).canonical;
  }

  /** The catalog tool and its canonical definition; throws naming close matches when unknown. */
  async subject(server: string, tool: string): Promise<{ tool: CatalogTool; canonical: CanonicalTool; siblings: CatalogTool[] }> {
    const tools = this.#serverTools(server);
    const found = tools.find((t) => t.name === tool);
    if (!found) {
      const names = tools.map((t) => t.name);
      throw new LoadoutError('TOOL_NOT_FOUND', `Server '${server}' has no tool '${tool}'; its tools: ${names.join(', ') || '(none)'}.`);
    }
    const canonical = (await this.canonical(server))[tool]!;
    return { tool: found, canonical, siblings: tools.filter((t) => t !== found) };
  }

  /** Store a candidate after the length and injection checks (`force` accepts flagged text). */
  async propose(
    server: string,
    tool: string,
    description: string,
    options: { example?: string; force?: boolean } = {},
  ): Promise<ToolCandidate> {
    await this.subject(server, tool);
    const charCount = [...description].length;
    if (charCount > MAX_CANDIDATE_CHARS) {
      throw new LoadoutError(
        'CANDIDATE_REJECTED',
        `The description is ${charCount} characters; the limit is ${MAX_CANDIDATE_CHARS}. Shorten it by ${charCount - MAX_CANDIDATE_CHARS}.`,
      );
    }
    if (!description.trim()) throw new LoadoutError('CANDIDATE_REJECTED', 'The description is empty.');
    const flags = findInjectionPatterns(`${description}\n${options.example ?? ''}`);
    if (flags.length && !options.force) {
      throw new LoadoutError(
        'CANDIDATE_REJECTED',
        `The description looks like instruction injection: it ${flags.join('; it ')}. Rewrite it, or pass force: true to store it flagged.`,
      );
    }
    const candidate: ToolCandidate = {
      id: newId(),
      toolName: tool,
      description,
      charCount,
      createdAt: new Date().toISOString(),
      ...(options.example ? { example: options.example } : {}),
      ...(flags.length ? { flags } : {}),
    };
    await this.store.addCandidate(server, candidate);
    return candidate;
  }

  /** Replace a tool's golden prompts; shouldCallTool defaults to "not negative". */
  async savePrompts(server: string, tool: string, inputs: readonly PromptInput[]): Promise<GoldenPrompt[]> {
    await this.subject(server, tool);
    const others = new Set((await this.store.server(server)).prompts.filter((p) => p.toolName !== tool).map((p) => p.id));
    const given = new Set<string>();
    inputs.forEach((input, index) => {
      if (input.toolName !== undefined && input.toolName !== tool) {
        throw new LoadoutError(
          'INVALID_ARGUMENT',
          `Prompt ${index + 1} is for tool '${input.toolName}', but these prompts are saved for '${tool}'; save them with tool '${input.toolName}', or drop toolName.`,
        );
      }
      if (input.id === undefined) return;
      if (given.has(input.id) || others.has(input.id)) {
        throw new LoadoutError(
          'INVALID_ARGUMENT',
          `Prompt ${index + 1} has id '${input.id}', already used by another prompt of server '${server}'; give a unique id or leave id out.`,
        );
      }
      given.add(input.id);
    });
    const prompts = inputs.map((input) => ({
      id: input.id ?? newId(),
      toolName: tool,
      category: input.category,
      prompt: input.prompt,
      expectedBehavior: input.expectedBehavior ?? { shouldCallTool: input.category !== 'negative' },
    }));
    await this.store.replacePrompts(server, tool, prompts);
    return prompts;
  }

  /**
   * Record a run the agent made itself. `correct` is computed from `toolCalled` and the prompt's
   * `shouldCallTool` (a run with an `error` is not correct); a given `correct` that contradicts
   * them is refused rather than stored.
   */
  async recordRun(server: string, candidateId: string, promptId: string, result: EvalResultInput): Promise<EvalRun> {
    const data = await this.store.server(server);
    const prompt = data.prompts.find((p) => p.id === promptId);
    if (!prompt)
      throw new LoadoutError(
        'INVALID_ARGUMENT',
        `No golden prompt '${promptId}' for server '${server}'; see get_eval_results or save_golden_prompts.`,
      );
    if (candidateId !== CANONICAL_CANDIDATE_ID && !data.candidates.some((c) => c.id === candidateId && c.toolName === prompt.toolName)) {
      throw new LoadoutError(
        'INVALID_ARGUMENT',
        `No candidate '${candidateId}' for ${server}.${prompt.toolName}; use a candidateId from propose_candidate, or '${CANONICAL_CANDIDATE_ID}' for the original description.`,
      );
    }
    const correct = expectedCorrect(prompt, result);
    if (result.correct !== undefined && result.correct !== correct) {
      const expectation = prompt.expectedBehavior.shouldCallTool ? 'expects the tool to be called' : 'expects no call';
      throw new LoadoutError(
        'INVALID_ARGUMENT',
        `correct: ${result.correct} contradicts the run: toolCalled is ${result.toolCalled}${result.error ? ' with an error' : ''} and prompt '${promptId}' ${expectation} (shouldCallTool: ${prompt.expectedBehavior.shouldCallTool}), so it is ${correct ? 'correct' : 'not correct'}; leave correct out and loadout computes it.`,
      );
    }
    const run: EvalRun = {
      id: newId(),
      toolName: prompt.toolName,
      candidateId,
      promptId,
      timestamp: new Date().toISOString(),
      backend: 'manual',
      result: { ...result, correct: expectedCorrect(prompt, result) },
    };
    await this.store.addRuns(server, [run]);
    return run;
  }

  /** Metrics per candidate and of the baseline, for one tool or every tool with data. */
  async results(server: string, filter: { tool?: string; candidateId?: string } = {}): Promise<ToolResults[]> {
    const data = await this.store.server(server);
    const byCandidate = filter.candidateId ? data.candidates.find((c) => c.id === filter.candidateId) : undefined;
    if (filter.candidateId && !byCandidate)
      throw new LoadoutError('INVALID_ARGUMENT', `No candidate '${filter.candidateId}' for server '${server}'.`);
    const tool = filter.tool ?? byCandidate?.toolName;
    const tools = tool ? [tool] : [...new Set([...data.candidates, ...data.prompts].map((x) => x.toolName))];
    return tools.map((name) => this.#toolResults(data, name, filter.candidateId));
  }

  /** Promote a candidate if it passes the rule (or `force`); the new description is live at once. */
  async promote(
    server: string,
    tool: string,
    candidateId: string,
    force = false,
  ): Promise<{ verdict: PromotionVerdict; results: DescriptionResults; baseline: DescriptionResults }> {
    await this.subject(server, tool);
    const data = await this.store.server(server);
    const candidate = data.candidates.find((c) => c.id === candidateId && c.toolName === tool);
    if (!candidate)
      throw new LoadoutError('INVALID_ARGUMENT', `No candidate '${candidateId}' for ${server}.${tool}; see get_eval_results.`);
    const results = this.#toolResults(data, tool, candidateId);
    const scored = results.candidates[0]!;
    const verdict = scored.verdict!;
    const failures = [
      ...verdict.failures,
      ...(candidate.flags?.length ? [`safety: the candidate was stored with flags (${candidate.flags.join('; ')})`] : []),
    ];
    if (failures.length && !force) {
      throw new LoadoutError(
        'PROMOTION_REFUSED',
        `Candidate '${candidateId}' was not promoted: ${failures.join('; ')}. Pass force: true to promote it anyway.`,
      );
    }
    await this.store.setPromotion(server, {
      toolName: tool,
      candidateId,
      description: candidate.description,
      promotedAt: new Date().toISOString(),
      forced: failures.length > 0,
      metrics: scored.metrics,
      baseline: results.baseline.runs ? results.baseline.metrics : null,
    });
    await this.applyPromotions();
    return { verdict: { promote: failures.length === 0, failures }, results: scored, baseline: results.baseline };
  }

  /** Back to the canonical description. */
  async revert(server: string, tool: string): Promise<string> {
    const removed = await this.store.removePromotion(server, tool);
    if (!removed) throw new LoadoutError('INVALID_ARGUMENT', `${server}.${tool} has no promoted description to revert.`);
    await this.applyPromotions();
    return (await this.store.server(server)).canonical[tool]?.description ?? '';
  }

  /** The report of one server, or of every server with data or tools. */
  async report(server?: string): Promise<OptimizationReport[]> {
    const all = await this.store.all();
    const catalog = this.#catalog.current;
    const servers = server ? [server] : [...new Set([...Object.keys(all), ...catalog.visible().map((t) => t.server)])];
    if (server && !all[server] && !catalog.hasServer(server))
      throw new LoadoutError('SERVER_NOT_FOUND', `No server '${server}' in the catalog or optimization data.`);
    return servers.map((name) =>
      buildReport(
        name,
        all[name] ?? { canonical: {}, candidates: [], prompts: [], runs: [], promotions: {} },
        catalog
          .visible()
          .filter((t) => t.server === name)
          .map((t) => t.name),
      ),
    );
  }

  #toolResults(data: ServerOptimization, tool: string, onlyCandidate?: string): ToolResults {
    const prompts = data.prompts.filter((p) => p.toolName === tool);
    const runsOf = (candidateId: string): EvalRun[] => data.runs.filter((r) => r.toolName === tool && r.candidateId === candidateId);
    const describe = (candidateId: string, description: string): DescriptionResults => {
      const runs = runsOf(candidateId);
      return { candidateId, description, runs: runs.length, ...computeMetrics(runs, prompts) };
    };
    const baseline = describe(CANONICAL_CANDIDATE_ID, data.canonical[tool]?.description ?? '');
    const candidates = data.candidates
      .filter((c) => c.toolName === tool && (!onlyCandidate || c.id === onlyCandidate))
      .map((c) => {
        const results = describe(c.id, c.description);
        return { ...results, verdict: shouldPromote(results.metrics, baseline.runs ? baseline.metrics : null, this.settings.thresholds) };
      });
    return { tool, promptCount: prompts.length, promotedCandidateId: data.promotions[tool]?.candidateId ?? null, baseline, candidates };
  }

  #serverTools(server: string): CatalogTool[] {
    const catalog = this.#catalog.current;
    if (!catalog.hasServer(server)) {
      throw new LoadoutError(
        'SERVER_NOT_FOUND',
        `Server '${server}' has no discovered tools (not configured, disabled, or discovery failed); check servers.yaml.`,
      );
    }
    return catalog.visible().filter((t) => t.server === server);
  }
}

function sameEntries(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

// A run is correct when the tool was called exactly when the prompt expects it, and nothing failed.
function expectedCorrect(prompt: GoldenPrompt, result: Pick<EvalResultInput, 'toolCalled' | 'error'>): boolean {
  return result.error === undefined && result.toolCalled === prompt.expectedBehavior.shouldCallTool;
}
