// Runs once before any test file: checks that what the suite reads is there, so a missing build
// or install fails in a second with one line naming the fix, not minutes later as hundreds of
// spawn errors.
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each file the suite needs, with the command that makes it. */
const REQUIRED: ReadonlyArray<readonly [file: string, fix: string]> = [
  ['dist/bundle/loadout.js', 'npm run build'],
  ['dist/test/fixtures/echo.js', 'npm run build'],
  ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'npm ci'],
  ['node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', 'npm ci'],
  ['node_modules/@modelcontextprotocol/server-memory/dist/index.js', 'npm ci'],
  ['test/fixtures/search-dev/queries.json', 'git checkout -- test/fixtures/search-dev'],
];

/** Programs the sandbox tests run servers with (Linux), by the Debian package that brings each: .ci/run installs them. */
const SANDBOX_PROGRAMS: ReadonlyArray<readonly [program: string, pkg: string]> = [
  ['bwrap', 'bubblewrap'],
  ['socat', 'socat'],
  ['rg', 'ripgrep'],
];

export default function checkPrerequisites(): void {
  const missing = REQUIRED.filter(([file]) => !existsSync(path.join(ROOT, file)));
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const absent =
    process.platform !== 'linux' ? [] : SANDBOX_PROGRAMS.filter(([program]) => !dirs.some((dir) => existsSync(path.join(dir, program))));
  if (absent.length > 0) {
    const packages = absent.map(([, pkg]) => pkg).join(' ');
    throw new Error(
      `The sandbox tests need ${absent.map(([program]) => program).join(', ')}: run apt-get install ${packages} (.ci/run installs them).`,
    );
  }
  if (missing.length === 0) return;
  const fixes = [...new Set(missing.map(([, fix]) => fix))].join(', then ');
  throw new Error(`The tests need ${missing.map(([file]) => file).join(', ')}: run ${fixes} (npm test builds first).`);
}
