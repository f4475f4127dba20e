// Where loadout keeps its config and data: explicit options, then the environment, then the
// platform defaults; an empty environment variable counts as unset, never as the current folder.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePaths } from './paths.js';

describe('resolvePaths', () => {
  it('takes the environment over the defaults, and an option over the environment', () => {
    const env = { LOADOUT_CONFIG_DIR: '/tmp/lo-config', LOADOUT_DATA_DIR: '/tmp/lo-data' };
    expect(resolvePaths({}, env)).toMatchObject({ configDir: '/tmp/lo-config', dataDir: '/tmp/lo-data' });
    expect(resolvePaths({ configDir: '/tmp/other' }, env).configDir).toBe('/tmp/other');
  });

  it('treats LOADOUT_CONFIG_DIR= and LOADOUT_DATA_DIR= as unset (they resolved to the current folder)', () => {
    const unset = resolvePaths({}, {});
    const empty = resolvePaths({}, { LOADOUT_CONFIG_DIR: '', LOADOUT_DATA_DIR: '' });
    expect(empty).toEqual(unset);
    expect(empty.configDir).not.toBe(path.resolve(''));
  });
});
