// Test helpers for the loadout CLI: run a command as a real child process with temp dirs and a
// temp HOME, and write tool lists for the `mutable` fixture server.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CLI, fixture, type TempDirs } from './gateway.js';

/** What a CLI run printed and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `loadout ARGS` with --config/--data of `dirs`, HOME set to `<root>/home` unless given. */
export function runCli(
  dirs: Pick<TempDirs, 'root' | 'configDir' | 'dataDir'>,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, '--config', dirs.configDir, '--data', dirs.dataDir, ...args],
      {
        cwd: options.cwd ?? dirs.root,
        // CODEX_HOME would point setup and doctor at the real Codex config: empty is unset.
        env: { ...process.env, HOME: path.join(dirs.root, 'home'), CODEX_HOME: '', NO_COLOR: '1', ...options.env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Write the tool list the `mutable` fixture serves; returns its servers.yaml entry. */
export async function mutableServer(
  dir: string,
  name: string,
  tools: Array<{ name: string; description?: string }>,
  about: { description?: string; instructions?: string } = {},
): Promise<Record<string, unknown>> {
  const file = path.join(dir, `${name}-tools.json`);
  await writeFile(file, JSON.stringify(Object.keys(about).length ? { tools, ...about } : tools));
  return { command: process.execPath, args: [fixture('mutable'), file] };
}

/** The non-empty lines of a text. */
export function linesOf(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}
