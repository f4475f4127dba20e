// loadout's version, from package.json: inlined by scripts/bundle.mjs at build time, so a start
// reads no file for it; running from source (tests) or from tsc's output, it is read once here.
import { readFileSync } from 'node:fs';

declare const LOADOUT_PACKAGE_VERSION: string | undefined;

/** The version loadout reports to clients, servers and `--version`. */
export const LOADOUT_VERSION: string = typeof LOADOUT_PACKAGE_VERSION === 'string' ? LOADOUT_PACKAGE_VERSION : versionFromPackageJson();

function versionFromPackageJson(): string {
  // This file sits in src/shared/ or dist/src/shared/: the package root is two or three levels up.
  for (const candidate of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'loadout' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // not this level
    }
  }
  throw new Error('loadout: package.json not found above src/shared/version');
}
