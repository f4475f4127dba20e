// Where the equipped sets of modern HTTP requests are recorded (recordedToolset.ts's
// ToolsetRecord), in one of two places: files in the data dir (a principal's
// `principals/<id>.json`, a toolset endpoint's toolset file), watched with fs.watch; or rows of the
// team store (`--store`), whose versions are the revisions heard on the store's change bus, so a
// request learns that nothing changed without a round trip to the database.
import { watch } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  ABSENT_FILE_STAMP,
  EquippedRecordSchema,
  equippedFileText,
  fileStamp,
  readTextIfExists,
  withFileLock,
  writeTextAtomic,
} from '../config/index.js';
import { LoadoutError, errorMessage, type Logger } from '../shared/index.js';
import type { Principal } from '../identity/index.js';
import type { StoreChange, TeamStore } from '../store/index.js';
import { ALL_TOOLSET } from '../toolsets/index.js';
import type { ToolsetRecord } from './recordedToolset.js';

/** Where the records of the sets are kept: one record per principal, and one per toolset endpoint. */
export interface ToolsetRecordPlace {
  /** The record of `principal`'s equipped set. */
  principal(principal: Principal): ToolsetRecord;
  /** The record of the set a toolset endpoint serves: the saved toolset itself, always. */
  toolset(toolset: string): ToolsetRecord;
  close(): void;
}

/** What both places share: the set of a principal with no record yet, and where to log. */
interface PlaceOptions {
  /** The toolset of a principal with no record yet (--equip, or the one remembered for that principal's next start). */
  initial: (principal: Principal) => Promise<string | null>;
  logger: Logger;
}

/** Records as files: `<data>/principals/<id>.json`, and `<toolsets dir>/<name>.yaml`. */
export class FileRecordPlace implements ToolsetRecordPlace {
  readonly #principalsDir: string;
  readonly #toolsetsDir: string;
  readonly #options: PlaceOptions;
  #dirMade: Promise<unknown> | undefined;

  constructor(dataDir: string, toolsetsDir: string, options: PlaceOptions) {
    this.#principalsDir = path.join(dataDir, 'principals');
    this.#toolsetsDir = toolsetsDir;
    this.#options = options;
  }

  principal(principal: Principal): ToolsetRecord {
    const file = path.join(this.#principalsDir, `${principal.id}.json`);
    const { initial, logger } = this.#options;
    return {
      version: () => fileStamp(file),
      check: () => Promise.resolve(),
      read: async (first) => {
        // The directory exists before anything watches it.
        await (this.#dirMade ??= mkdir(this.#principalsDir, { recursive: true }));
        let text: string | undefined;
        try {
          text = await readTextIfExists(file);
          if (text !== undefined) return EquippedRecordSchema.parse(JSON.parse(text)).toolset;
        } catch (error) {
          logger.warn({ mod: 'http', file, err: errorMessage(error) }, 'unreadable principal toolset file; serving the set as it was');
          return undefined;
        }
        // Before its first equip a principal gets what a new session would; a deleted record means none.
        return first ? initial(principal) : null;
      },
      write: (toolset) =>
        withFileLock(file, async () => {
          await writeTextAtomic(file, equippedFileText({ toolset }));
          // Under the lock no other process can have replaced it since: this stamp is this write's.
          return fileStamp(file);
        }),
      watch: (changed) => watchFile(file, changed),
    };
  }

  toolset(toolset: string): ToolsetRecord {
    const file = path.join(this.#toolsetsDir, `${toolset}.yaml`);
    return {
      version: () => fileStamp(file),
      check: () => Promise.resolve(),
      // Saved again re-reads it, deleted empties it; `all` has no file and is always there.
      read: () => Promise.resolve(fileStamp(file) !== ABSENT_FILE_STAMP || toolset === ALL_TOOLSET ? toolset : null),
      write: () => Promise.reject(fixedSetRefusal(toolset)),
      watch: (changed) => watchFile(file, changed),
    };
  }

  close(): void {}
}

/**
 * Records in the team store: a principal's in `equipped` under its id, a toolset endpoint's is the
 * `toolsets` record itself. One subscription to the store's changes keeps the revision last heard
 * of each record (a resync, after the bus was away longer than the change log keeps, changes every
 * version), and tells the watchers of that record.
 */
export class StoreRecordPlace implements ToolsetRecordPlace {
  readonly #store: TeamStore;
  readonly #options: PlaceOptions;
  /** `kind key` → the revision last heard or written. */
  readonly #revisions = new Map<string, number>();
  readonly #watchers = new Map<string, Set<() => void>>();
  /** Grows with each resync, so every version differs after one. */
  #generation = 0;
  readonly #stopHearing: () => void;

  constructor(store: TeamStore, options: PlaceOptions) {
    this.#store = store;
    this.#options = options;
    this.#stopHearing = store.onChange((change) => this.#hear(change));
  }

  principal(principal: Principal): ToolsetRecord {
    const { initial, logger } = this.#options;
    const at = `equipped ${principal.id}`;
    return {
      version: () => this.#version(at),
      check: () => this.#check(at, () => this.#store.equipped.get(principal.id)),
      read: async (first) => {
        let record;
        try {
          record = await this.#store.equipped.get(principal.id);
        } catch (error) {
          // Neither the store nor its local copy knows the set: a set never read here is not
          // guessed at (served empty, it would look unequipped), its request fails naming the store.
          if (first) throw error;
          logger.warn({ mod: 'http', err: errorMessage(error) }, 'could not read an equipped set from the store; serving it as it was');
          return undefined;
        }
        if (record) return record.value.toolset;
        // Before its first equip a principal gets what a new session would; a deleted record means none.
        return first ? initial(principal) : null;
      },
      write: async (toolset) => {
        const revision = await this.#store.equipped.put(principal.id, { toolset });
        this.#note(at, revision);
        return this.#version(at);
      },
      watch: (changed) => this.#watch(at, changed),
    };
  }

  toolset(toolset: string): ToolsetRecord {
    const at = `toolsets ${toolset}`;
    return {
      version: () => this.#version(at),
      check: () => (toolset === ALL_TOOLSET ? Promise.resolve() : this.#check(at, () => this.#store.toolsets.get(toolset))),
      read: async () => (toolset === ALL_TOOLSET || (await this.#store.toolsets.get(toolset)) ? toolset : null),
      write: () => Promise.reject(fixedSetRefusal(toolset)),
      watch: (changed) => this.#watch(at, changed),
    };
  }

  close(): void {
    this.#stopHearing();
  }

  // The revision of the record as kept now; a store that cannot be read leaves the version heard
  // (the set is served as it was, as read() does).
  async #check(at: string, get: () => Promise<{ revision: number } | undefined>): Promise<void> {
    try {
      const record = await get();
      if (record) this.#note(at, record.revision);
    } catch (error) {
      this.#options.logger.debug(
        { mod: 'http', err: errorMessage(error) },
        'could not check an equipped set in the store; serving it as heard',
      );
    }
  }

  #version(at: string): string {
    return `${this.#generation}:${this.#revisions.get(at) ?? 0}`;
  }

  // A later write's notice may come before an earlier one's: the highest revision is the record's.
  #note(at: string, revision: number): void {
    this.#revisions.set(at, Math.max(revision, this.#revisions.get(at) ?? 0));
  }

  #hear(change: StoreChange): void {
    if (change.type === 'resync') {
      this.#generation++;
      for (const watchers of this.#watchers.values()) for (const changed of watchers) changed();
      return;
    }
    if (change.kind !== 'equipped' && change.kind !== 'toolsets') return;
    const at = `${change.kind} ${change.key}`;
    const before = this.#version(at);
    this.#note(at, change.revision);
    if (this.#version(at) !== before) for (const changed of this.#watchers.get(at) ?? []) changed();
  }

  #watch(at: string, changed: () => void): () => void {
    let watchers = this.#watchers.get(at);
    if (!watchers) this.#watchers.set(at, (watchers = new Set()));
    watchers.add(changed);
    return () => {
      watchers.delete(changed);
      if (!watchers.size) this.#watchers.delete(at);
    };
  }
}

// The directory, not the file: an atomic write renames a new file over it, which a watch on the old
// inode would miss. Without a watch (no directory yet), requests still see every change (each
// checks the file first); only listeners here miss those made elsewhere.
function watchFile(file: string, changed: () => void): () => void {
  const name = path.basename(file);
  try {
    const watcher = watch(path.dirname(file), (_event, changedName) => {
      if (changedName === null || changedName === name) changed();
    });
    watcher.on('error', () => watcher.close());
    return () => watcher.close();
  } catch {
    return () => undefined;
  }
}

function fixedSetRefusal(toolset: string): LoadoutError {
  return new LoadoutError(
    'INVALID_ARGUMENT',
    `This endpoint (/mcp/toolsets/${toolset}) always serves toolset '${toolset}'; equip another toolset at /mcp`,
  );
}
