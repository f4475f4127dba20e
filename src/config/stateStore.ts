// state.json in the data dir: what loadout alone writes (the equipped toolset, optimization data).
// lowdb holds the document; every change re-reads under an inter-process lock, validates with
// zod, and writes atomically, so two gateways sharing a data dir never lose each other's writes.
import { copyFile } from 'node:fs/promises';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import * as z from 'zod';
import { LoadoutError, errorMessage, firstIssue } from '../shared/index.js';
import { ToolsetNameSchema } from './schema.js';
import { OptimizationStateSchema } from './optimizationState.js';
import { withFileLock } from './safeWrite.js';

/** The whole state.json. */
const StateSchema = z.strictObject({
  version: z.literal(1).default(1),
  /** The toolset equipped at the last stop, re-equipped at the next start (`all` included). */
  activeToolset: ToolsetNameSchema.nullable().default(null),
  /** Tool-description optimization data per server. */
  optimization: OptimizationStateSchema.prefault({}),
});
/** What state.json holds. */
export type State = z.infer<typeof StateSchema>;

/** Typed, locked access to state.json. */
export class StateStore {
  readonly #file: string;
  readonly #db: Low<unknown>;

  constructor(file: string) {
    this.#file = file;
    this.#db = new Low<unknown>(new JSONFile<unknown>(file), null);
  }

  /** The state file's path. */
  get file(): string {
    return this.#file;
  }

  /** The current state from disk (defaults when the file does not exist). */
  async read(): Promise<State> {
    return this.#load();
  }

  /**
   * Re-read, apply `change` to a copy, validate, write atomically; returns the new state. A change
   * that answers undefined leaves the file as it is (and gets the state as it is). `written` runs
   * after, still under the lock: what it records cannot be overtaken by another write.
   */
  async update(
    change: (state: State) => State | undefined | Promise<State | undefined>,
    written?: (state: State) => Promise<void>,
  ): Promise<State> {
    return withFileLock(this.#file, async () => {
      const current = await this.#load();
      const changed = await change(current);
      let next = current;
      if (changed !== undefined) {
        next = StateSchema.parse(changed);
        this.#db.data = next;
        await this.#db.write();
      }
      await written?.(next);
      return next;
    });
  }

  async #load(): Promise<State> {
    try {
      await this.#db.read();
    } catch (error) {
      throw await this.#corrupt(`is not valid JSON (${errorMessage(error)})`);
    }
    const parsed = StateSchema.safeParse(this.#db.data ?? {});
    if (!parsed.success) {
      const { path, message } = firstIssue(parsed.error);
      throw await this.#corrupt(`has an invalid value at ${path}: ${message}`);
    }
    return parsed.data;
  }

  // A broken state file is kept aside rather than silently emptied: the user may want it back.
  async #corrupt(problem: string): Promise<LoadoutError> {
    const backup = `${this.#file}.corrupt-${Date.now()}`;
    await copyFile(this.#file, backup).catch(() => undefined);
    return new LoadoutError(
      'STATE_INVALID',
      `${this.#file} ${problem}; a copy was kept at ${backup}. Fix or delete the file and try again.`,
    );
  }
}
