// loadout's version, read from package.json (bundled into dist/bundle at build time, so a start
// reads no file for it).
import packageJson from '../../package.json' with { type: 'json' };

/** The version loadout reports to clients, servers and `--version`. */
export const LOADOUT_VERSION: string = packageJson.version;
