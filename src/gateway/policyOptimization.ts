// The optimization loop as one principal may use it under `policy:`: its catalog is the
// principal's view, and its stored data (canonical definitions, candidates, golden prompts, runs,
// promotions) holds only the granted tools. So get_canonical_tools, the reports and results name
// no other tool, and proposing, evaluating, promoting or reverting one fails as for a tool that
// does not exist. Promotions stay shared: one applied here is applied for everyone, as before.
import type { CatalogStore } from '../catalog/index.js';
import type { ServerOptimization } from '../config/index.js';
import type { Grants } from '../identity/index.js';
import { OptimizationLoop } from '../optimization/index.js';
import { overlay } from './overlay.js';

/** `loop` as `grants` allow it, over the principal's `catalog`. */
export function restrictedOptimization(loop: OptimizationLoop, catalog: CatalogStore, grants: () => Grants | undefined): OptimizationLoop {
  const { store } = loop;
  const granted = (server: string, data: ServerOptimization): ServerOptimization => {
    const limit = grants();
    return limit ? onlyGranted(data, (tool) => limit.tool(server, tool)) : data;
  };
  const restrictedStore = overlay(store, {
    server: () => async (server: string) => granted(server, await store.server(server)),
    all: () => async () => {
      const all = await store.all();
      const limit = grants();
      if (!limit) return all;
      return Object.fromEntries(
        Object.entries(all)
          .filter(([server]) => limit.server(server))
          .map(([server, data]) => [server, granted(server, data)]),
      );
    },
    captureCanonical: () => async (server: string, tools: Parameters<typeof store.captureCanonical>[1]) =>
      granted(server, await store.captureCanonical(server, tools)),
    // The one write not preceded by a check of the tool against the (restricted) catalog.
    removePromotion: () => (server: string, tool: string) =>
      grants()?.tool(server, tool) === false ? Promise.resolve(undefined) : store.removePromotion(server, tool),
  });
  return new PrincipalOptimizationLoop(loop, { store: restrictedStore, catalog, settings: loop.settings });
}

// Promotions are pushed into the shared catalog by the shared loop, which remembers what it applied.
class PrincipalOptimizationLoop extends OptimizationLoop {
  readonly #shared: OptimizationLoop;

  constructor(shared: OptimizationLoop, options: ConstructorParameters<typeof OptimizationLoop>[0]) {
    super(options);
    this.#shared = shared;
  }

  override applyPromotions(): Promise<boolean> {
    return this.#shared.applyPromotions();
  }
}

function onlyGranted(data: ServerOptimization, granted: (tool: string) => boolean): ServerOptimization {
  return {
    canonical: Object.fromEntries(Object.entries(data.canonical).filter(([tool]) => granted(tool))),
    candidates: data.candidates.filter((candidate) => granted(candidate.toolName)),
    prompts: data.prompts.filter((prompt) => granted(prompt.toolName)),
    runs: data.runs.filter((run) => granted(run.toolName)),
    promotions: Object.fromEntries(Object.entries(data.promotions).filter(([tool]) => granted(tool))),
  };
}
