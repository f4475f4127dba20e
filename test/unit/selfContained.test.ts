// A stranger's clone has only the repository: no code, test, bench or script may read files
// outside it (the shared design folder that sits beside the repo in development is not there).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The design folder's entries, and the path-joined form the bench once used; built from parts so
// that this file does not match itself.
const OUTSIDE = ['shared', '/(search-dev|seeds|hooks|SPEC|STYLE)', "|'shared'", ", 'search-dev'"].join('');

describe('the repository', () => {
  it('refers to no file in ../shared from src, test, bench, scripts, demo or package.json', () => {
    const grep = spawnSync('git', ['grep', '-nE', OUTSIDE, '--', 'src', 'test', 'bench', 'scripts', 'demo', 'package.json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    // git grep exits 1 when nothing matches, 0 with matches, 2+ on error.
    expect(grep.status, grep.stderr).not.toBe(2);
    expect(grep.stdout).toBe('');
  });
});
