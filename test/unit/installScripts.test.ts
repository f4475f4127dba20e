// A fresh `npm install` / `npm ci` must print no install-script warning a user cannot act on:
// every locked package with an install script is decided on in package.json's allowScripts
// (npm 11.16+ lists the undecided ones after every install).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../helpers/tempDir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('install scripts', () => {
  it('every locked package with an install script has an allowScripts entry', async () => {
    const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const decided = Object.keys(manifest.allowScripts ?? {}).map((key) => key.replace(/(.)@.*$/, '$1'));
    const withScripts = Object.entries(lock.packages)
      .filter(([where, entry]) => where !== '' && entry.hasInstallScript)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('esbuild');
    expect(withScripts.filter((name) => !decided.includes(name))).toEqual([]);
  });

  describe('the prepare script', () => {
    const dir = useTempDir('loadout-prepare-');

    it('says it is building and how long it takes, then how long it took', async () => {
      // An `npm` that records its arguments: the build itself is not what is tested here.
      const npm = path.join(dir(), 'npm');
      await writeFile(npm, `#!/bin/sh\necho "$@" >> ${JSON.stringify(path.join(dir(), 'calls'))}\n`, { mode: 0o755 });
      const { stderr } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts/prepare.mjs')], {
        env: { PATH: `${dir()}${path.delimiter}${process.env.PATH ?? ''}` },
      });
      expect(stderr.split('\n')).toEqual([
        'loadout: building dist/ (tsc, esbuild): about half a minute',
        expect.stringMatching(/^loadout: built in \d+ s$/),
        '',
      ]);
      expect(await readFile(path.join(dir(), 'calls'), 'utf8')).toBe('run build\n');
    });
  });
});
