// The files store files mode runs on: a single user's data dir and config dir's toolsets, in the
// formats they have always had. Revisions are kept in this process's memory (no ledger file beside
// them, no lock taken to read), and nothing is watched: opening it costs no I/O, and it holds no
// handle, so a command may open one for a single read.
import type { LoadoutPaths } from '../config/index.js';
import { openFileStore } from './fileStore.js';
import type { TeamStore } from './store.js';

/** Open the files of `paths` as files mode keeps them. */
export function openDataDirStore(paths: Pick<LoadoutPaths, 'dataDir' | 'toolsetsDir'>): Promise<TeamStore> {
  return openFileStore({ dataDir: paths.dataDir, toolsetsDir: paths.toolsetsDir, listen: false, revisionsInMemory: true });
}
