// How a client should start loadout: `loadout serve` when the `loadout` on the PATH is this very
// program (after `npm install -g`), `npx -y loadout serve` when npx runs it, else node with this
// script's absolute path; plus finding other executables (Claude Code's `claude`) on the PATH.
import { constants } from 'node:fs';
import { access, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { LaunchCommand } from './setupPlan.js';

/** The absolute path of `name` on the PATH, or undefined. */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const names = process.platform === 'win32' ? [`${name}.cmd`, `${name}.exe`, name] : [name];
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const candidate of names) {
      const file = path.join(dir, candidate);
      try {
        await access(file, constants.X_OK);
        return file;
      } catch {
        // not here; keep looking
      }
    }
  }
  return undefined;
}

/** The command a client runs to start this loadout, passing on a non-default config or data dir. */
export async function launchCommand(script: string, dirs: { config?: string; data?: string }): Promise<LaunchCommand> {
  const self = await realpath(script).catch(() => path.resolve(script));
  const onPath = await findOnPath('loadout');
  const sameProgram = onPath !== undefined && (await realpath(onPath).catch(() => onPath)) === self;
  const options = [
    ...(dirs.config ? ['--config', path.resolve(dirs.config)] : []),
    ...(dirs.data ? ['--data', path.resolve(dirs.data)] : []),
  ];
  if (sameProgram) return { command: 'loadout', args: [...options, 'serve'] };
  // npx's cache (~/.npm/_npx/<hash>/) can be cleaned at any time: name the package, not the path.
  if (self.split(path.sep).includes('_npx')) return { command: 'npx', args: ['-y', 'loadout', ...options, 'serve'] };
  return { command: process.execPath, args: [self, ...options, 'serve'] };
}
