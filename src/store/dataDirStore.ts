// The files store files mode runs on: a single user's data dir and config dir's toolsets, in the
// formats they have always had. Revisions are kept in this process's memory (no ledger file beside
// them, no lock taken to read), and nothing is watched unless a caller asks to hear changes.
import type { LoadoutPaths } from '../config/index.js';
import { openFileStore } from './fileStore.js';
import type { TeamStore } from './store.js';

/** Open the files of `paths` as files mode keeps them; `listen`: hear changes (fs.watch), off by default. */
export function openDataDirStore(
  paths: Pick<LoadoutPaths, 'dataDir' | 'toolsetsDir'>,
  { listen = false }: { listen?: boolean } = {},
): Promise<TeamStore> {
  return openFileStore({ dataDir: paths.dataDir, toolsetsDir: paths.toolsetsDir, listen, revisionsInMemory: true });
}
