// Saved toolsets in the team store (`--store`): one record per toolset, so every replica reads the
// same ones. Read from the store on every use, as the files are read fresh on every use: a toolset
// saved through another replica is seen at once, and nothing here is a cache to go stale.
import type { Toolset } from '../config/index.js';
import type { RecordCollection } from '../store/index.js';
import { toolsetName, toolsetNotFound, validToolset, writableToolsetName, type ToolsetProblem, type Toolsets } from './toolsetStore.js';

/** Saved toolsets kept in the store's `toolsets` collection, keyed by name. */
export class StoredToolsets implements Toolsets {
  readonly #records: RecordCollection<Toolset>;

  constructor(records: RecordCollection<Toolset>) {
    this.#records = records;
  }

  async list(): Promise<{ toolsets: Toolset[]; problems: ToolsetProblem[] }> {
    const records = await this.#records.list();
    const toolsets = records.map((record) => record.value).sort((a, b) => a.name.localeCompare(b.name));
    return { toolsets, problems: [] satisfies ToolsetProblem[] };
  }

  async get(name: string): Promise<Toolset> {
    const record = await this.#records.get(toolsetName(name));
    if (record) return record.value;
    throw toolsetNotFound(name, (await this.list()).toolsets);
  }

  /** Saved once the store acknowledged it (committed); a store fault is thrown and nothing is saved. */
  async save(toolset: Toolset): Promise<void> {
    const valid = validToolset(toolset);
    await this.#records.put(valid.name, valid);
  }

  delete(name: string): Promise<boolean> {
    return this.#records.delete(writableToolsetName(name, 'delete'));
  }
}
