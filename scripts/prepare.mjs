// The `prepare` script: builds dist/ on `npm install` in a clone, `npm install -g .`, `npm link`
// and `npm pack`. A global install of a folder links it without installing its dependencies, so
// when the build tools are missing it first installs them into the folder, from the lockfile.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hasBuildTools = ['typescript', 'esbuild'].every((name) => existsSync(path.join(root, 'node_modules', name, 'package.json')));

// npm runs this script with its output hidden (unless --foreground-scripts): a line for the user
// then goes to the terminal itself, so a first install is not two silent minutes. No terminal (CI):
// stderr, which npm shows when the script fails.
function say(line) {
  if (process.env.npm_lifecycle_event === 'prepare' && process.env.npm_config_foreground_scripts !== 'true') {
    try {
      const tty = openSync('/dev/tty', 'w');
      writeSync(tty, `${line}\n`);
      closeSync(tty);
      return;
    } catch {
      // no terminal: stderr below
    }
  }
  process.stderr.write(`${line}\n`);
}

const startedMs = Date.now();

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
  say('loadout: installing the build tools into the clone (npm ci), then building dist/ (tsc, esbuild): about 2 minutes');
  // --ignore-scripts: this prepare script must not run again inside it, and esbuild's postinstall
  // is not needed (see allowScripts in package.json).
  run(['ci', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund'], env);
} else say('loadout: building dist/ (tsc, esbuild): about half a minute');
run(['run', 'build']);
say(`loadout: built in ${Math.round((Date.now() - startedMs) / 1000)} s`);
