// Crash-safe, process-safe file updates: an inter-process lock (proper-lockfile) around
// "re-read, change, write to a temp file, rename" (write-file-atomic), so two loadout processes
// sharing a config dir never lose each other's writes and a reader never sees half a file.
// The lock and atomic-write libraries are imported on first write, not at startup: a warm start
// only reads files, and loading them (and graceful-fs, signal-exit …) cost ~10 % of it.
import { statSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const LOCK_OPTIONS = {
  realpath: false, // the file may not exist yet
  stale: 10_000,
  retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100 },
} as const;

/** Run `task` while holding the inter-process lock for `file`, waiting while another process holds it. */
export async function withFileLock<T>(file: string, task: () => Promise<T>): Promise<T> {
  const release = await takeFileLock(file, { wait: true });
  try {
    return await task();
  } finally {
    await release();
  }
}

/** Run `task` holding the lock for `file` only if no process holds it now; `{ ran: false }` when one does. */
export async function tryWithFileLock<T>(file: string, task: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const release = await takeFileLock(file, { wait: false });
  if (!release) return { ran: false };
  try {
    return { ran: true, value: await task() };
  } finally {
    await release();
  }
}

type ReleaseLock = () => Promise<void>;

// The lock both take: waiting (retrying for a while), or not at all (undefined while another process holds it).
async function takeFileLock(file: string, how: { wait: true }): Promise<ReleaseLock>;
async function takeFileLock(file: string, how: { wait: boolean }): Promise<ReleaseLock | undefined>;
async function takeFileLock(file: string, { wait }: { wait: boolean }): Promise<ReleaseLock | undefined> {
  await mkdir(path.dirname(file), { recursive: true });
  // Loaded on first use, as is write-file-atomic below: a warm start writes nothing, and each costs
  // ~15 ms of CPU to load from node_modules (process.cpuUsage), a tenth of a warm start's.
  const { default: lockfile } = await import('proper-lockfile');
  try {
    return await lockfile.lock(file, wait ? LOCK_OPTIONS : { ...LOCK_OPTIONS, retries: 0 });
  } catch (error) {
    if (!wait && (error as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
    throw error;
  }
}

/**
 * The file's text, or undefined when it does not exist. Read as bytes, then decoded once: read with
 * an encoding, node decodes it chunk by chunk and joins the pieces, which held a large file's text
 * about twice (catalog.json at 5,000 tools: 7 MB more at a gateway's first search).
 */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** What fileStamp answers for a file that does not exist. */
export const ABSENT_FILE_STAMP = 'absent';

/**
 * The file's identity (inode, mtime, size), or ABSENT_FILE_STAMP: an atomic write replaces the
 * inode, so a rewrite with the same text shows too. Compared with the stamp of the last read, it
 * says whether another process may have changed the file, without reading it.
 */
export function fileStamp(file: string): string {
  try {
    // Synchronous: one stat syscall of a small local file; the promise form costs several times
    // more CPU (a thread-pool round trip), and callers stat once per request.
    const { ino, mtimeMs, size } = statSync(file);
    return `${ino}:${mtimeMs}:${size}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT_FILE_STAMP;
    throw error;
  }
}

/** Replace the file atomically (temp file + rename); `mode` makes it private (e.g. 0o600) from its first byte. */
export async function writeTextAtomic(file: string, text: string, options: { mode?: number } = {}): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const { default: writeFileAtomic } = await import('write-file-atomic');
  await writeFileAtomic(file, text, { encoding: 'utf8', ...(options.mode === undefined ? {} : { mode: options.mode }) });
}

/**
 * Locked read-modify-write: `change` gets the current text (undefined if absent) and returns
 * the new text, or undefined to leave the file alone. `mode` as in writeTextAtomic.
 */
export async function updateTextFile(
  file: string,
  change: (current: string | undefined) => string | undefined | Promise<string | undefined>,
  options: { mode?: number } = {},
): Promise<void> {
  await withFileLock(file, async () => {
    const next = await change(await readTextIfExists(file));
    if (next !== undefined) await writeTextAtomic(file, next, options);
  });
}
