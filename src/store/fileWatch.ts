// How stores on one data dir hear each other: fs.watch on the dirs that hold the files (data dir,
// principals/, oauth/, the toolsets dir). An event names a file; the kinds kept in it are read
// again and compared with what this store last saw, record by record, so a change is reported
// with its key, op and revision whoever made it (another process, this one, an older loadout).
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { Mutex } from 'async-mutex';
import { errorMessage, type Logger } from '../shared/index.js';
import type { StoreChange } from './store.js';
import type { FileRecords } from './fileCollection.js';
import { EVERY_KEY } from './fileLayouts.js';

const UNREADABLE = Symbol('unreadable');

// Events of one atomic write (temp file, rename) arrive together: one re-read for them all.
const SETTLE_MS = 15;

interface Watched {
  records: FileRecords<unknown, unknown>;
  /** Fingerprint of each record as this store last saw it. */
  seen: Map<string, string>;
  pending: Set<string> | typeof EVERY_KEY | undefined;
  timer: NodeJS.Timeout | undefined;
  mutex: Mutex;
}

/** Watches the files of some kinds and reports each record that changed. */
export class FileWatch {
  readonly #kinds: Watched[];
  readonly #emit: (change: StoreChange) => void;
  readonly #log: Logger;
  readonly #watchers: FSWatcher[] = [];
  #closed = false;

  constructor(records: ReadonlyArray<FileRecords<unknown, unknown>>, emit: (change: StoreChange) => void, logger: Logger) {
    this.#kinds = records.map((kind) => ({ records: kind, seen: new Map(), pending: undefined, timer: undefined, mutex: new Mutex() }));
    this.#emit = emit;
    this.#log = logger.child({ mod: 'store-watch' });
  }

  /** Read what is there now, then watch every dir (made when missing, so it can be watched). */
  async start(): Promise<void> {
    for (const kind of this.#kinds) {
      for (const [key, value] of await kind.records.layout.readAll()) kind.seen.set(key, kind.records.fingerprintOf(value));
    }
    const dirs = new Set(this.#kinds.flatMap((kind) => kind.records.layout.watched.map((watched) => watched.dir)));
    for (const dir of dirs) {
      await mkdir(dir, { recursive: true });
      const watcher = watch(dir, (_event, fileName) => this.#heard(dir, fileName));
      watcher.on('error', (error) => {
        this.#log.warn({ dir, err: errorMessage(error) }, 'stopped watching a store dir; re-read everything');
        this.#emit({ type: 'resync', reason: `watching ${dir} failed: ${errorMessage(error)}` });
      });
      this.#watchers.push(watcher);
    }
  }

  /** Stop watching; resolves once no comparison is under way. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const watcher of this.#watchers) watcher.close();
    for (const kind of this.#kinds) clearTimeout(kind.timer);
    await Promise.all(this.#kinds.map((kind) => kind.mutex.waitForUnlock()));
  }

  #heard(dir: string, fileName: string | null): void {
    for (const kind of this.#kinds) {
      for (const watched of kind.records.layout.watched) {
        if (watched.dir !== dir) continue;
        // No name (some platforms): any record of the dir may have changed.
        const key = fileName === null ? EVERY_KEY : watched.keyOf(fileName);
        if (key !== undefined) this.#schedule(kind, key);
      }
    }
  }

  #schedule(kind: Watched, key: string | typeof EVERY_KEY): void {
    if (key === EVERY_KEY || kind.pending === EVERY_KEY) kind.pending = EVERY_KEY;
    else kind.pending = new Set(kind.pending).add(key);
    kind.timer ??= setTimeout(() => {
      kind.timer = undefined;
      const pending = kind.pending;
      kind.pending = undefined;
      if (pending !== undefined) void kind.mutex.runExclusive(() => this.#compare(kind, pending));
    }, SETTLE_MS).unref();
  }

  // Report each record whose content differs from what was seen, then remember the new content.
  async #compare(kind: Watched, keys: Set<string> | typeof EVERY_KEY): Promise<void> {
    if (this.#closed) return;
    const { records } = kind;
    const now = new Map<string, string>();
    const compared = new Set<string>();
    try {
      if (keys === EVERY_KEY) {
        for (const [key, value] of await records.layout.readAll()) now.set(key, records.fingerprintOf(value));
        for (const key of [...kind.seen.keys(), ...now.keys()]) compared.add(key);
      } else {
        for (const key of keys) {
          const value = await this.#readable(kind, key, () => records.layout.read(key));
          if (value === UNREADABLE) continue;
          if (value !== undefined) now.set(key, records.fingerprintOf(value));
          compared.add(key);
        }
      }
    } catch (error) {
      this.#unreadable(kind, 'every key', error);
      return;
    }
    for (const key of compared) {
      const fingerprint = now.get(key);
      if (fingerprint === kind.seen.get(key)) continue;
      const record = fingerprint === undefined ? undefined : await this.#readable(kind, key, () => records.get(key));
      if (this.#closed || record === UNREADABLE) continue;
      if (record) {
        kind.seen.set(key, records.fingerprintOf(record.value));
        this.#emit({ type: 'change', kind: records.kind, key, op: 'put', revision: record.revision, missed: false });
      } else if (kind.seen.delete(key)) {
        const revision = await this.#readable(kind, key, () => records.deletedRevision(key));
        if (revision !== UNREADABLE) this.#emit({ type: 'change', kind: records.kind, key, op: 'delete', revision, missed: false });
      }
    }
  }

  // A file caught half-edited by hand, or invalid, is passed over: its next change is read again.
  async #readable<T>(kind: Watched, key: string, read: () => Promise<T>): Promise<T | typeof UNREADABLE> {
    try {
      return await read();
    } catch (error) {
      this.#unreadable(kind, key, error);
      return UNREADABLE;
    }
  }

  #unreadable(kind: Watched, key: string, error: unknown): void {
    this.#log.warn({ kind: kind.records.kind, key, err: errorMessage(error) }, 'could not read a changed store file');
  }
}
