// The `prepare` script: builds dist/ on `npm install` in a clone, `npm install -g .`, `npm link`
// and `npm pack`. A global install of a folder links it without installing its dependencies, so
// when the build tools are missing it first installs them into the folder, from the lockfile.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hasBuildTools = ['typescript', 'esbuild'].every((name) => existsSync(path.join(root, 'node_modules', name, 'package.json')));

function run(args, env = process.env) {
  const result = spawnSync('npm', args, { cwd: root, env, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!hasBuildTools) {
  // The nested install must go into this folder, not the global prefix `-g` set for this script;
  // it exists to get the devDependencies, so an outer --omit=dev does not apply; and the global
  // install's --allow-scripts is refused in a project install.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^npm_config_(global|location|prefix|allow_scripts|omit|include|production|only)$/i.test(key),
    ),
  );
  process.stderr.write('loadout: installing build dependencies into the clone (npm ci), then building\n');
  // --ignore-scripts: this prepare script must not run again inside it, and esbuild's postinstall
  // is not needed (see allowScripts in package.json).
  run(['ci', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund'], env);
}
run(['run', 'build']);
