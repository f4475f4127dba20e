// The files store files mode runs on: a single user's data dir and config dir's toolsets, in the
// formats they have always had. Revisions are kept in this process's memory (no ledger file beside
// them, no lock taken to read), and nothing is watched: opening it costs no I/O, and it holds no
// handle, so a command may open one for a single read.
import path from 'node:path';
import type { LoadoutPaths } from '../config/index.js';
import { LoadoutError } from '../shared/index.js';
import { openFileStore } from './fileStore.js';
import type { TeamStore } from './store.js';

/** Open the files of `paths` as files mode keeps them. */
export function openDataDirStore(paths: Pick<LoadoutPaths, 'dataDir' | 'toolsetsDir'>): Promise<TeamStore> {
  return openFileStore({ dataDir: paths.dataDir, toolsetsDir: paths.toolsetsDir, listen: false, revisionsInMemory: true });
}

// The file of a data dir that holds each kind a caller may name by its file.
const FILE_OF_KIND = { catalog: 'catalog.json', learnedWords: 'learned-words.json', optimization: 'state.json' } as const;

/** The records of `kind` in the data dir whose file `file` is (named by that file, as a caller without a runtime has it), as files mode keeps them. */
export async function dataDirRecords<K extends keyof typeof FILE_OF_KIND>(file: string, kind: K): Promise<TeamStore[K]> {
  if (path.basename(file) !== FILE_OF_KIND[kind])
    throw new LoadoutError('INVALID_ARGUMENT', `${kind} are kept in a data dir's ${FILE_OF_KIND[kind]}, not ${file}`);
  const dataDir = path.dirname(file);
  // Only `kind` is read through this store: no config dir's toolsets are, so the data dir's own path stands in.
  return (await openDataDirStore({ dataDir, toolsetsDir: path.join(dataDir, 'toolsets') }))[kind];
}

/** The saved toolsets of a toolsets dir (as a caller without a runtime has it), as files mode keeps them. */
export async function dataDirToolsets(dir: string): Promise<TeamStore['toolsets']> {
  // Only the toolsets are read through this store, and nothing is written beside them: the dir stands in for the data dir.
  return (await openDataDirStore({ dataDir: dir, toolsetsDir: dir })).toolsets;
}
