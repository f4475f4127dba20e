// Optimization data per server: canonical tools, candidates, golden prompts, eval runs,
// promotions. It is the store's `optimization` records, one per server: state.json's
// `optimization.servers` in files mode (every change a locked, validated, atomic update of the
// file), the team store's rows with `--store`. Each change is the store's read-modify-write of that
// server's record (retried on a concurrent write), so replicas and commands changing the same
// server build on each other's changes. This file decides only what each change does.
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
import { dataDirRecords, type RecordCollection } from '../store/index.js';

// Built when needed rather than at load: a zod parse at import time slows every start.
const emptyServer = (): ServerOptimization => ServerOptimizationSchema.parse({});

/** A new id for a candidate, prompt or run: nanoid over letters and digits, so a shell never reads it as an option. */
export const newId: () => string = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 16);

/** Typed access to the optimization data, wherever it is kept. */
export class OptimizationStore {
  readonly #records: Promise<RecordCollection<ServerOptimization>>;

  /** `records`: the store's optimization records, or a data dir's state.json (opened as files mode keeps it). */
  constructor(records: StateStore | RecordCollection<ServerOptimization>) {
    this.#records = records instanceof StateStore ? dataDirRecords(records.file, 'optimization') : Promise.resolve(records);
  }

  /** Everything stored for one server (empty when nothing is). */
  async server(server: string): Promise<ServerOptimization> {
    return (await (await this.#records).get(server))?.value ?? emptyServer();
  }

  /** Every server's data. */
  async all(): Promise<Record<string, ServerOptimization>> {
    return Object.fromEntries((await (await this.#records).list()).map((record) => [record.key, record.value]));
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

  // Replace one server's data by what `change` makes of it, with no concurrent change undone; answers the data written.
  async #update(server: string, change: (data: ServerOptimization) => ServerOptimization): Promise<ServerOptimization> {
    const written = await (await this.#records).update(server, (data) => change(data ?? emptyServer()));
    return written!.value;
  }
}
