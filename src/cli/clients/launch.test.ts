import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { launchCommand } from './launch.js';
import { useTempDir } from '../../../test/helpers/tempDir.js';

describe('launchCommand', () => {
  const tempDir = useTempDir('loadout-launch-');
  let dir: string;
  let script: string;
  beforeEach(async () => {
    dir = tempDir();
    script = path.join(dir, 'pkg', 'dist', 'bundle', 'loadout.js');
    await mkdir(path.dirname(script), { recursive: true });
    await writeFile(script, '#!/usr/bin/env node\n');
    await chmod(script, 0o755);
    await mkdir(path.join(dir, 'bin'));
    vi.stubEnv('PATH', path.join(dir, 'bin'));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is `loadout serve` when the loadout on the PATH is this program (a global install links to it)', async () => {
    await symlink(script, path.join(dir, 'bin', 'loadout'));
    expect(await launchCommand(path.join(dir, 'bin', 'loadout'), {})).toEqual({ command: 'loadout', args: ['serve'] });
  });

  it('is node with the absolute script path when another loadout (or none) is on the PATH, passing --config/--data on', async () => {
    await writeFile(path.join(dir, 'bin', 'loadout'), '#!/bin/sh\n', { mode: 0o755 });
    expect(await launchCommand(script, { config: 'cfg' })).toEqual({
      command: process.execPath,
      args: [script, '--config', path.resolve('cfg'), 'serve'],
    });
  });

  it('names the package for npx rather than its cache path', async () => {
    expect(
      await launchCommand(path.join(dir, '_npx', '1a2b', 'node_modules', 'loadout', 'dist', 'bundle', 'loadout.js'), { data: '/d' }),
    ).toEqual({ command: 'npx', args: ['-y', 'loadout', '--data', '/d', 'serve'] });
  });
});
