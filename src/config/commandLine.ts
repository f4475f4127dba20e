// A whole command line written as `command` ("uvx mcp-server-fetch"): spawn would look for a
// program of that name. Told apart from a program whose own path has a space in it, which exists.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The entry as it should be written: `command` the program alone, its words moved to the front of `args`. */
export function splitCommandEntry(command: string, args: readonly string[]): { command: string; args: string[] } {
  const [program = '', ...words] = command.trim().split(/\s+/);
  return { command: program, args: [...words, ...args] };
}

/**
 * Whether `command` is a command line rather than a program: it has words, and no file of that
 * name exists (at that path, against `cwd`, or on PATH for a bare name). A `${VAR}` in it is
 * only known at start, so it is left for the start to tell.
 */
export function isWholeCommandLine(command: string, cwd: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!/\S\s+\S/.test(command.trim()) || command.includes('${')) return false;
  if (command.includes('/') || command.includes(path.sep)) {
    const base = cwd !== undefined && !cwd.includes('${') ? cwd : process.cwd();
    return !existsSync(path.resolve(base, command));
  }
  return !(env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && existsSync(path.join(dir, command)));
}

/** `command: "uvx"` and `args: ["mcp-server-fetch"]` on lines of their own: what to write instead. */
export function splitEntryText(command: string, args: readonly string[]): string {
  const split = splitCommandEntry(command, args);
  return `command: ${JSON.stringify(split.command)}\nargs: ${JSON.stringify(split.args)}`;
}
