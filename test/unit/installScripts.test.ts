// A fresh `npm install` / `npm ci` must print no install-script warning a user cannot act on:
// every locked package with an install script is decided on in package.json's allowScripts
// (npm 11.16+ lists the undecided ones after every install).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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
});
