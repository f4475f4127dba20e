// The `prepack` and `postpack` scripts: the packed (and published) package.json carries no
// `prepare`. npm 11 lists a tarball's `prepare` as an install script "not yet covered by
// allowScripts" on every install of the tarball, although the tarball ships dist/ and never runs
// it; the clone keeps `prepare` for `npm install -g .` (scripts/prepare.mjs).
//   node scripts/pack-manifest.mjs strip    builds if dist/ is stale, then drops `prepare`
//   node scripts/pack-manifest.mjs restore  puts package.json back, byte for byte
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifestFile = path.join(root, 'package.json');
// Kept in dist/ (ignored by git, not packed) so a pack that died between the two scripts is undone
// by the next one.
const backupFile = path.join(root, 'dist', 'package.json.prepack');
const BUNDLE = path.join(root, 'dist', 'bundle', 'loadout.js');
const BUILD_INPUTS = ['src', 'scripts/bundle.mjs', 'package.json', 'package-lock.json', 'tsconfig.json'];

function restore() {
  if (!existsSync(backupFile)) return;
  const { mtime } = statSync(backupFile);
  renameSync(backupFile, manifestFile);
  // The original mtime, so the restored file does not look newer than the build it went into.
  utimesSync(manifestFile, mtime, mtime);
}

function newestMtimeMs(file) {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(file).map((entry) => newestMtimeMs(path.join(file, entry))));
}

// `npm pack` runs `prepare` only after prepack, from the manifest this script has just stripped,
// so the build happens here; skipped when dist/ is newer than what it is built from, because
// rewriting dist/ under a test run that is using it breaks that run.
function buildIfStale() {
  const built = existsSync(BUNDLE) ? statSync(BUNDLE).mtimeMs : 0;
  if (BUILD_INPUTS.every((input) => newestMtimeMs(path.join(root, input)) < built)) return;
  const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function strip() {
  restore();
  buildIfStale();
  const text = readFileSync(manifestFile, 'utf8');
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  const { mtime } = statSync(manifestFile);
  writeFileSync(backupFile, text);
  utimesSync(backupFile, mtime, mtime);
  // Renamed into place: a reader of package.json (a test, an editor) never sees it half written.
  const stripped = `${manifestFile}.tmp`;
  writeFileSync(stripped, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(stripped, manifestFile);
}

const mode = process.argv[2];
if (mode === 'strip') strip();
else if (mode === 'restore') restore();
else {
  process.stderr.write(`pack-manifest: expected "strip" or "restore", got ${JSON.stringify(mode)}\n`);
  process.exit(2);
}
