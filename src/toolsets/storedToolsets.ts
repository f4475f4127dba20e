// Saved toolsets as the store's `toolsets` records, one per toolset, keyed by name: YAML files in
// the config dir in files mode (ToolsetStore), the team store's rows with `--store`. Read from the
// store on every use, as the files are read fresh on every use: a toolset saved through another
// replica or process is seen at once, and nothing here is a cache to go stale.
import type { Toolset } from '../config/index.js';
import { errorMessage } from '../shared/index.js';
import type { RecordCollection } from '../store/index.js';
import { toolsetName, toolsetNotFound, validToolset, writableToolsetName, type ToolsetProblem, type Toolsets } from './toolsetRules.js';

/** Saved toolsets kept in a store's `toolsets` collection, keyed by name. */
export class StoredToolsets implements Toolsets {
  readonly #records: Promise<RecordCollection<Toolset>>;

  constructor(records: RecordCollection<Toolset> | Promise<RecordCollection<Toolset>>) {
    this.#records = Promise.resolve(records);
  }

  /** Every readable saved toolset, sorted by name, plus the ones that could not be read (a file edited into nonsense). */
  async list(): Promise<{ toolsets: Toolset[]; problems: ToolsetProblem[] }> {
    const toolsets: Toolset[] = [];
    const problems: ToolsetProblem[] = [];
    for (const listed of await (await this.#records).listEach()) {
      if (listed.kind === 'ok') toolsets.push(listed.record.value);
      else problems.push({ file: listed.where, error: errorMessage(listed.failure) });
    }
    return { toolsets: toolsets.sort((a, b) => a.name.localeCompare(b.name)), problems };
  }

  async get(name: string): Promise<Toolset> {
    const record = await (await this.#records).get(toolsetName(name));
    if (record) return record.value;
    throw toolsetNotFound(name, (await this.list()).toolsets);
  }

  /** Saved once the store acknowledged it (committed, or the file written); a store fault is thrown and nothing is saved. */
  async save(toolset: Toolset, check?: (kept: Toolset | undefined) => void): Promise<void> {
    const valid = validToolset(toolset);
    const records = await this.#records;
    if (!check) return void (await records.put(valid.name, valid));
    await records.update(valid.name, (kept) => {
      check(kept);
      return valid;
    });
  }

  async delete(name: string): Promise<boolean> {
    return (await this.#records).delete(writableToolsetName(name, 'delete'));
  }
}
