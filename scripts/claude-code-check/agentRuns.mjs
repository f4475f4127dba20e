// What the checks that run real agent CLIs share (run.mjs here, ../clients-check/run.mjs): the CLI
// installed once from a folder's own package.json and lockfile into a scratch folder, and one run
// of it with its output collected and a deadline, and the messages stdioTee.mjs logged.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The path of each of `bins` once `folder`'s package.json and lockfile are installed into `dir`
 * (`npm ci`, once; later runs reuse it). Exits 2 if the install fails.
 */
export function installFromLockfile(folder, dir, bins, what) {
  const binOf = (name) => path.join(dir, 'node_modules', '.bin', name);
  if (bins.every((name) => existsSync(binOf(name)))) return binOf;
  mkdirSync(dir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(folder, file), path.join(dir, file));
  console.error(`installing ${what} into ${dir} (npm ci)`);
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit', shell: process.platform === 'win32' });
  if (install.status !== 0) process.exit(2);
  return binOf;
}

/** Run `command` to its end (killed after `timeoutMs`): `{ code, stdout, stderr }`. */
export function runAgent(command, args, { env, cwd, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The messages stdioTee.mjs logged to `file`, in order (none if it never started). */
export function readTraffic(file) {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
}
