// Where audit records go: the day files in the data dir (the trail `loadout audit` reads; in
// Postgres mode the store's table instead, storedTrail.ts), and
// JSON lines to one more file or to stdout, for a SIEM. A sink writes one batch at a time and
// throws when it cannot; the trail (auditTrail.ts) reports a lost sink, never the caller.
import { appendFile, mkdir, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { AuditRecord } from './auditRecord.js';

/** A place audit records are written to, a batch of JSON lines at a time. */
export interface AuditSink {
  /** How the log names it. */
  readonly name: string;
  /** Write a batch of records, grouped by the UTC day of their records. */
  write(batch: readonly DayLines[]): Promise<void>;
  /** Settle what it holds (a sink that keeps records back); the trail calls it once, after its last write. */
  close?(): Promise<void>;
}

/** The records of one batch that fall on one UTC day. */
export interface DayLines {
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string;
  /** Each record with its JSON (its line without the newline). */
  readonly records: ReadonlyArray<{ readonly record: AuditRecord; readonly json: string }>;
}

// What a file sink appends: one JSON line per record. Joined only here: the store's sink needs none.
function linesText(batch: readonly DayLines[]): string {
  return batch.map(({ records }) => records.map(({ json }) => `${json}\n`).join('')).join('');
}

/** The folder of the day files, in a data dir. */
export function auditDir(dataDir: string): string {
  return path.join(dataDir, 'audit');
}

const DAY_FILE = /^audit-(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** The day file of `day` (`YYYY-MM-DD`). */
function dayFileName(day: string): string {
  return `audit-${day}.jsonl`;
}

/** The day of a day file's name, or undefined for any other file. */
export function dayOfFile(name: string): string | undefined {
  return DAY_FILE.exec(name)?.[1];
}

/**
 * The trail in the data dir: `audit-YYYY-MM-DD.jsonl`, one file per UTC day of the records, each
 * batch appended in one write (0600). When a batch opens a new day, files older than
 * `retentionDays` are deleted (0 keeps them all).
 */
export function dayFilesSink(dir: string, retentionDays: number): AuditSink {
  let lastDay: string | undefined;
  // The folder is made when an append finds it missing (at first, or after it was removed), not
  // before every batch: a recursive mkdir costs more CPU than the append itself.
  const append = async (day: string, text: string): Promise<void> => {
    const file = path.join(dir, dayFileName(day));
    try {
      await appendFile(file, text, { mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await appendFile(file, text, { mode: 0o600 });
    }
  };
  return {
    name: dir,
    async write(batch) {
      for (const lines of batch) await append(lines.day, linesText([lines]));
      const newest = batch.at(-1)?.day;
      if (newest === undefined || newest === lastDay) return;
      lastDay = newest;
      if (retentionDays > 0) await deleteOldDays(dir, newest, retentionDays);
    },
  };
}

async function deleteOldDays(dir: string, today: string, retentionDays: number): Promise<void> {
  const oldest = new Date(Date.parse(`${today}T00:00:00Z`) - (retentionDays - 1) * 86_400_000).toISOString().slice(0, 10);
  for (const name of await readdir(dir)) {
    const day = dayOfFile(name);
    // Another loadout process on this data dir may have deleted it first.
    if (day !== undefined && day < oldest) await unlink(path.join(dir, name)).catch(ignoreMissing);
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

/** Every record also as a JSON line appended to `file`. */
export function linesFileSink(file: string): AuditSink {
  return {
    name: file,
    async write(batch) {
      await appendFile(file, linesText(batch), { mode: 0o600 });
    },
  };
}

/** Every record also as a JSON line on `stream` (stdout, under `serve --http`, where it carries no protocol). */
export function linesStreamSink(stream: NodeJS.WritableStream, name: string): AuditSink {
  return {
    name,
    write: (batch) =>
      new Promise<void>((resolve, reject) => {
        stream.write(linesText(batch), (error) => (error ? reject(error) : resolve()));
      }),
  };
}
