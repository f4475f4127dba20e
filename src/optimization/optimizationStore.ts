// Optimization data per server: canonical tools, candidates, golden prompts, eval runs,
// promotions. Where it is kept is an OptimizationPlace: state.json (every change a locked,
// validated, atomic update through StateStore), or in store mode the team store's `optimization`
// records, one per server (storedOptimization.ts). This file decides only what each change does.
import { customAlphabet } from 'nanoid';
import {
  ServerOptimizationSchema,
  type CanonicalTool,
  type EvalRun,
  type GoldenPrompt,
  type PromotedTool,
  type ServerOptimization,
  StateStore,
  type ToolCandidate,
} from '../config/index.js';

// Built when needed rather than at load: a zod parse at import time slows every start.
export const emptyServer = (): ServerOptimization => ServerOptimizationSchema.parse({});

/** Where the optimization data is kept, server by server. */
export interface OptimizationPlace {
  /** One server's data; undefined when none is kept. */
  server(server: string): Promise<ServerOptimization | undefined>;
  /** Every server's data. */
  all(): Promise<Record<string, ServerOptimization>>;
  /** Replace one server's data by what `change` makes of it, with no concurrent change undone; answers the data written. */
  update(server: string, change: (data: ServerOptimization) => ServerOptimization): Promise<ServerOptimization>;
}

/** The `optimization` section of state.json as an OptimizationPlace. */
function stateFileOptimization(state: StateStore): OptimizationPlace {
  return {
    server: async (server) => (await state.read()).optimization.servers[server],
    all: async () => (await state.read()).optimization.servers,
    async update(server, change) {
      const next = await state.update((state) => {
        const data = state.optimization.servers[server] ?? emptyServer();
        return { ...state, optimization: { ...state.optimization, servers: { ...state.optimization.servers, [server]: change(data) } } };
      });
      return next.optimization.servers[server]!;
    },
  };
}

/** A new id for a candidate, prompt or run: nanoid over letters and digits, so a shell never reads it as an option. */
export const newId: () => string = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 16);

/** Typed access to the optimization data, wherever it is kept. */
export class OptimizationStore {
  readonly #place: OptimizationPlace;

  /** `place`: state.json's StateStore, or another place. */
  constructor(place: StateStore | OptimizationPlace) {
    this.#place = place instanceof StateStore ? stateFileOptimization(place) : place;
  }

  /** Everything stored for one server (empty when nothing is). */
  async server(server: string): Promise<ServerOptimization> {
    return (await this.#place.server(server)) ?? emptyServer();
  }

  /** Every server's data. */
  async all(): Promise<Record<string, ServerOptimization>> {
    return this.#place.all();
  }

  /** Record canonical definitions for tools not captured yet; captured ones are never replaced. */
  async captureCanonical(server: string, tools: Record<string, CanonicalTool>): Promise<ServerOptimization> {
    const current = await this.server(server);
    if (Object.keys(tools).every((name) => current.canonical[name])) return current;
    return this.#update(server, (data) => ({ ...data, canonical: { ...tools, ...data.canonical } }));
  }

  /** Store a new candidate. */
  async addCandidate(server: string, candidate: ToolCandidate): Promise<void> {
    await this.#update(server, (data) => ({ ...data, candidates: [...data.candidates, candidate] }));
  }

  /** Replace a tool's golden prompt set. */
  async replacePrompts(server: string, tool: string, prompts: GoldenPrompt[]): Promise<void> {
    await this.#update(server, (data) => ({ ...data, prompts: [...data.prompts.filter((p) => p.toolName !== tool), ...prompts] }));
  }

  /** Append eval runs (one write for a batch). */
  async addRuns(server: string, runs: EvalRun[]): Promise<void> {
    if (!runs.length) return;
    await this.#update(server, (data) => ({ ...data, runs: [...data.runs, ...runs] }));
  }

  /** Make `promoted` the active optimization of its tool. */
  async setPromotion(server: string, promoted: PromotedTool): Promise<void> {
    await this.#update(server, (data) => ({ ...data, promotions: { ...data.promotions, [promoted.toolName]: promoted } }));
  }

  /** Drop a tool's promotion; returns the one removed, if any. */
  async removePromotion(server: string, tool: string): Promise<PromotedTool | undefined> {
    let removed: PromotedTool | undefined;
    await this.#update(server, (data) => {
      const { [tool]: dropped, ...rest } = data.promotions;
      removed = dropped;
      return { ...data, promotions: rest };
    });
    return removed;
  }

  /** Promoted descriptions of every server, by tool id (`server.tool`). */
  async promotedDescriptions(): Promise<Map<string, string>> {
    const overrides = new Map<string, string>();
    for (const [server, data] of Object.entries(await this.all())) {
      for (const promoted of Object.values(data.promotions)) overrides.set(`${server}.${promoted.toolName}`, promoted.description);
    }
    return overrides;
  }

  #update(server: string, change: (data: ServerOptimization) => ServerOptimization): Promise<ServerOptimization> {
    return this.#place.update(server, change);
  }
}
