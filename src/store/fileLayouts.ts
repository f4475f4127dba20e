// Where each kind lives in a data dir and how it is read and written: whole documents holding
// every record (catalog.json, discovery.json, learned-words.json, state.json) and one file per
// record (toolsets/*.yaml, principals/*.json, oauth/*.json). The texts come from the formats config
// declares for their owners, so a file written here is the file its owner would have written.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { readTextIfExists, withFileLock, writeTextAtomic, type State, type StateStore } from '../config/index.js';
import { LoadoutError, errorMessage } from '../shared/index.js';

/** What a transaction decides: `write` a value, `delete` the record, or nothing (`keep`); `result` runs after, still under the lock. */
export type Outcome<Write, Result> = { change: { write: Write } | 'delete' | 'keep'; result: () => Promise<Result> };

/** One record's part of a transaction over several (transactEach): its key, and what `work` decides on seeing it. */
export interface Step<Read, Write, Result> {
  key: string;
  work(this: void, current: Read | undefined): Promise<Outcome<Write, Result>>;
}

/** Which file names of a watched dir hold a kind's records: one record's key, or every record (a whole document). */
export interface WatchedDir {
  dir: string;
  keyOf(fileName: string): string | typeof EVERY_KEY | undefined;
}
/** A change to a document file may touch any of its records. */
export const EVERY_KEY = Symbol('every key');

/** One kind on disk: `Read` is what a read gives (checked by the collection), `Write` what a write takes. */
export interface FileLayout<Read, Write> {
  /** The file holding `key`, for messages. */
  fileOf(key: string): string;
  read(key: string): Promise<Read | undefined>;
  readAll(): Promise<Map<string, Read>>;
  /** Under the lock guarding `key`, let `work` see its current value and decide what is written. */
  transact<Result>(key: string, work: (current: Read | undefined) => Promise<Outcome<Write, Result>>): Promise<Result>;
  /**
   * transact() for several distinct keys: a document file is read, changed and written once for
   * all of them under its one lock (every `work` first, then every `result`); a file per record is
   * one transaction per key, in turn. Results in the steps' order.
   */
  transactEach<Result>(steps: ReadonlyArray<Step<Read, Write, Result>>): Promise<Result[]>;
  /** Write every record of `records` (others kept), a document file once for all of them. */
  putAll(records: ReadonlyMap<string, Write>): Promise<void>;
  readonly watched: readonly WatchedDir[];
}

/**
 * A document file holding every record of a kind by key; `text` answers undefined to remove the
 * file (no records left). `marked`: what a record to write is marked with first (catalog.json:
 * readBackAsWritten, as `parse` gives it back as its JSON). `parseToChange`: what a change starts
 * from, when not `parse` (catalog.json that cannot be read is only a cache: rebuilt, not refused).
 */
export function documentLayout<Read, Write>(options: {
  file: string;
  parse: (text: string | undefined) => Record<string, Read>;
  text: (records: Record<string, Read | Write>) => string | undefined;
  keys?: readonly string[];
  marked?: (record: Write) => Write;
  parseToChange?: (text: string | undefined) => Record<string, Read>;
}): FileLayout<Read, Write> {
  const { file, parse, text } = options;
  const readAll = async () => new Map(Object.entries(parse(await readTextIfExists(file))));
  // Under the file's lock: the document of `records`, or no file once it holds none.
  const writeDocument = async (records: Record<string, Read | Write>): Promise<void> => {
    const next = text(records);
    if (next === undefined) await rm(file, { force: true });
    else await writeTextAtomic(file, next);
  };
  return oneFileLayout(file, options.keys, {
    readAll,
    putAll: (written) =>
      withFileLock(file, async () => writeDocument({ ...parse(await readTextIfExists(file)), ...Object.fromEntries(written) })),
    transactEach: <Result>(steps: ReadonlyArray<Step<Read, Write, Result>>) =>
      withFileLock(file, async () => {
        const records: Record<string, Read | Write> = (options.parseToChange ?? parse)(await readTextIfExists(file));
        const outcomes: Array<Outcome<Write, Result>> = [];
        for (const { key, work } of steps) {
          const outcome = await work(Object.hasOwn(records, key) ? (records[key] as Read) : undefined);
          const { change } = outcome;
          if (change === 'delete') delete records[key];
          else if (change !== 'keep') records[key] = options.marked ? options.marked(change.write) : change.write;
          outcomes.push(outcome);
        }
        if (outcomes.some(({ change }) => change !== 'keep')) await writeDocument(records);
        const results: Result[] = [];
        for (const { result } of outcomes) results.push(await result());
        return results;
      }),
  });
}

/** One file per record, `<dir>/<key><extension>`. */
export function fileDirLayout<Read, Write>(options: {
  dir: string;
  extension: string;
  read: (file: string, key: string) => Promise<Read | undefined>;
  write: (file: string, value: Write, key: string) => Promise<void>;
}): FileLayout<Read, Write> {
  const { dir, extension } = options;
  const fileOf = (key: string) => {
    // The key becomes a file name: nothing that would leave the dir or hide as a dot file.
    if (/[/\\\0]/.test(key) || key.startsWith('.')) {
      throw new LoadoutError('INVALID_ARGUMENT', `'${key}' cannot be kept as a file in ${dir}: no '/', '\\' or leading '.'`);
    }
    return path.join(dir, `${key}${extension}`);
  };
  const read = (key: string) => options.read(fileOf(key), key);
  const transact: FileLayout<Read, Write>['transact'] = (key, work) => {
    const file = fileOf(key);
    return withFileLock(file, async () => {
      const { result, change } = await work(await options.read(file, key));
      if (change === 'delete') await rm(file, { force: true });
      else if (change !== 'keep') await options.write(file, change.write, key);
      return result();
    });
  };
  return {
    fileOf,
    read,
    readAll: async () => {
      const records = new Map<string, Read>();
      for (const key of await keysIn(dir, extension)) {
        const value = await read(key);
        if (value !== undefined) records.set(key, value);
      }
      return records;
    },
    putAll: async (written) => {
      // A file per record: each written once anyway.
      for (const [key, value] of written) {
        const file = fileOf(key);
        await withFileLock(file, () => options.write(file, value, key));
      }
    },
    transact,
    transactEach: inTurn(transact),
    watched: [{ dir, keyOf: (name) => (name.endsWith(extension) && !name.startsWith('.') ? name.slice(0, -extension.length) : undefined) }],
  };
}

/** Records kept inside state.json (through its owner, StateStore): `pick` reads them, `put` writes one (`undefined`: delete). */
export function stateLayout<T>(options: {
  store: StateStore;
  file: string;
  pick: (state: State) => Record<string, T>;
  put: (state: State, key: string, value: T | undefined) => State;
  keys?: readonly string[];
}): FileLayout<T, T> {
  const { store, file, pick } = options;
  // A data dir without state.json holds none of these records (StateStore would answer defaults).
  const readAll = async () => new Map((await readTextIfExists(file)) === undefined ? [] : Object.entries(pick(await store.read())));
  return oneFileLayout(file, options.keys, {
    readAll,
    putAll: async (written) => {
      await store.update((state) => [...written].reduce((next, [key, value]) => options.put(next, key, value), state));
    },
    transactEach: inTurn(async <Result>(key: string, work: (current: T | undefined) => Promise<Outcome<T, Result>>) => {
      let outcome: Outcome<T, Result> | undefined;
      let result: Result | undefined;
      await store.update(
        async (state) => {
          // Under the file's lock: a state.json made meanwhile is seen.
          const records = (await readTextIfExists(file)) === undefined ? {} : pick(state);
          outcome = await work(Object.hasOwn(records, key) ? records[key] : undefined);
          if (outcome.change === 'keep') return undefined;
          return options.put(state, key, outcome.change === 'delete' ? undefined : outcome.change.write);
        },
        async () => {
          result = await outcome!.result();
        },
      );
      return result as Result;
    }),
  });
}

/** Records split over two layouts by key (an equipped set: a principal's file, or the last stop in state.json). */
export function splitLayout<Read, Write>(
  special: { key: string; layout: FileLayout<Read, Write> },
  rest: FileLayout<Read, Write>,
): FileLayout<Read, Write> {
  const of = (key: string) => (key === special.key ? special.layout : rest);
  const transact: FileLayout<Read, Write>['transact'] = (key, work) => of(key).transact(key, work);
  return {
    fileOf: (key) => of(key).fileOf(key),
    read: (key) => of(key).read(key),
    readAll: async () => new Map([...(await rest.readAll()), ...(await special.layout.readAll())]),
    transact,
    transactEach: inTurn(transact),
    putAll: async (written) => {
      const specialOnes = new Map([...written].filter(([key]) => key === special.key));
      const others = new Map([...written].filter(([key]) => key !== special.key));
      if (specialOnes.size) await special.layout.putAll(specialOnes);
      if (others.size) await rest.putAll(others);
    },
    watched: [...rest.watched, ...special.layout.watched],
  };
}

// A layout whose records all live in one file: a write of a key it does not hold (`keys`;
// undefined: any) is refused before its lock is taken, and a change to the file touches them all.
function oneFileLayout<Read, Write>(
  file: string,
  keys: readonly string[] | undefined,
  kept: Pick<FileLayout<Read, Write>, 'readAll' | 'putAll' | 'transactEach'>,
): FileLayout<Read, Write> {
  const heldKey = (key: string): void => {
    if (keys && !keys.includes(key)) {
      throw new LoadoutError(
        'INVALID_ARGUMENT',
        `${file} holds only the key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}, not '${key}'`,
      );
    }
  };
  return {
    fileOf: () => file,
    read: async (key) => (await kept.readAll()).get(key),
    readAll: kept.readAll,
    putAll: async (written) => {
      for (const key of written.keys()) heldKey(key);
      await kept.putAll(written);
    },
    // Async, so a refused key rejects as the transaction would, not throws at the call.
    transact: async (key, work) => {
      heldKey(key);
      const [result] = await kept.transactEach([{ key, work }]);
      return result!;
    },
    transactEach: async (steps) => {
      for (const { key } of steps) heldKey(key);
      return kept.transactEach(steps);
    },
    watched: [{ dir: path.dirname(file), keyOf: (name) => (name === path.basename(file) ? EVERY_KEY : undefined) }],
  };
}

/** transactEach() as one transact() per key, in turn: for records that are not all in one file. */
function inTurn<Read, Write>(transact: FileLayout<Read, Write>['transact']): FileLayout<Read, Write>['transactEach'] {
  return async (steps) => {
    const results = [];
    for (const { key, work } of steps) results.push(await transact(key, work));
    return results;
  };
}

/** JSON text read as a value; a file that is not JSON is one line naming it. */
export function parseJsonFile(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new LoadoutError('STATE_INVALID', `${file} is not valid JSON (${errorMessage(error)}); fix or delete it`);
  }
}

async function keysIn(dir: string, extension: string): Promise<string[]> {
  try {
    return (await readdir(dir))
      .filter((name) => name.endsWith(extension) && !name.startsWith('.'))
      .map((name) => name.slice(0, -extension.length))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
