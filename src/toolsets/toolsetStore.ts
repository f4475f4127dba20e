// Saved toolsets in the config dir's `toolsets/`, one YAML file each, as files mode keeps them: the
// store's files backend over that dir (StoredToolsets), so a toolset saved by another loadout
// process, by hand or by git is seen at once, and a file that cannot be read is listed as a problem.
import { dataDirToolsets } from '../store/index.js';
import { StoredToolsets } from './storedToolsets.js';

/** The saved toolsets of one toolsets dir. */
export class ToolsetStore extends StoredToolsets {
  constructor(dir: string) {
    super(dataDirToolsets(dir));
  }
}
