// The spool of the trail in Postgres mode: each batch is written to a segment file of its own in
// the data dir (fsync'd, 0600 in a 0700 folder) before it is sent to the store, and removed once
// the store has it; while the store is away the segments wait, in order, up to a size. Knows
// nothing of the store: the sink (spooledStoreSink.ts) decides what is sent and when.
import { mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { AuditRecord } from './auditRecord.js';
import { parseLine } from './auditReader.js';

/** One record with its JSON (its line without the newline). */
export interface SpooledRecord {
  readonly record: AuditRecord;
  readonly json: string;
}

/** One segment file: one batch, kept until the store has it. */
export interface SpoolSegment {
  readonly name: string;
  readonly records: number;
  readonly bytes: number;
}

/** What an append kept and dropped. */
export interface SpoolAppend {
  /** The segment written, with the records it holds (the spool was full before any fit: none). */
  readonly segment?: SpoolSegment;
  readonly kept: readonly SpooledRecord[];
  /** Records past the spool's size, not written. */
  readonly dropped: number;
}

// <ms since the epoch, 13 digits>-<n, 9 digits>-<records>-<replica>.jsonl: in name order, in the
// order written (per replica; two processes on one data dir never share a name).
const SEGMENT = /^(\d{13})-(\d{9})-(\d+)-([\w-]+)\.jsonl$/;

/** The folder of the spool, in a data dir. */
export function spoolDir(dataDir: string): string {
  return path.join(dataDir, 'audit-spool');
}

/** A data dir's audit spool. */
export class AuditSpool {
  readonly dir: string;
  readonly #maxBytes: number;
  readonly #replica: string;
  #sequence = 0;
  #segments: SpoolSegment[] = [];
  #bytes = 0;
  readonly #ready: Promise<void>;

  constructor(dir: string, maxBytes: number, replica: string) {
    this.dir = dir;
    this.#maxBytes = maxBytes;
    this.#replica = replica;
    // Segments a stopped or killed process left: sent first, in their order.
    this.#ready = this.#list();
    // Reported by the first append or send that waits on it, not as an unhandled rejection.
    this.#ready.catch(() => undefined);
  }

  /** Records in the spool now, not yet in the store. */
  get records(): number {
    return this.#segments.reduce((sum, segment) => sum + segment.records, 0);
  }

  /** The segments waiting, oldest first. */
  async segments(): Promise<readonly SpoolSegment[]> {
    await this.#ready;
    return [...this.#segments];
  }

  /** Write `records` as one segment, fsync'd: as many as fit, in order; the rest are dropped. */
  async append(records: readonly SpooledRecord[]): Promise<SpoolAppend> {
    await this.#ready;
    let bytes = 0;
    let fit = 0;
    for (const { json } of records) {
      const size = Buffer.byteLength(json) + 1;
      if (this.#bytes + bytes + size > this.#maxBytes) break;
      bytes += size;
      fit++;
    }
    const kept = records.slice(0, fit);
    if (fit === 0) return { kept, dropped: records.length };
    const name = `${String(Date.now()).padStart(13, '0')}-${String(++this.#sequence).padStart(9, '0')}-${fit}-${this.#replica}.jsonl`;
    await this.#write(name, kept.map(({ json }) => `${json}\n`).join(''));
    const segment = { name, records: fit, bytes };
    this.#segments.push(segment);
    this.#bytes += bytes;
    return { segment, kept, dropped: records.length - fit };
  }

  /** The records of `segment`, read back; a line that is not a record is left out. */
  async read(segment: SpoolSegment): Promise<SpooledRecord[]> {
    const text = await readFile(path.join(this.dir, segment.name), 'utf8');
    const records: SpooledRecord[] = [];
    for (const json of text.split('\n')) {
      const record = json === '' ? undefined : parseLine(json);
      if (record) records.push({ record, json });
    }
    return records;
  }

  /** Forget `segment`: the store has its records. */
  async remove(segment: SpoolSegment): Promise<void> {
    // Another process on this data dir may have sent and removed it first.
    await unlink(path.join(this.dir, segment.name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    this.#segments = this.#segments.filter((kept) => kept !== segment);
    this.#bytes -= segment.bytes;
  }

  // Written under a name no reader lists, then renamed: a segment is seen whole or not at all.
  async #write(name: string, text: string): Promise<void> {
    const partial = path.join(this.dir, `.${name}.partial`);
    const file = await open(partial, 'w', 0o600).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      return open(partial, 'w', 0o600);
    });
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(partial, path.join(this.dir, name));
  }

  async #list(): Promise<void> {
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    const found: SpoolSegment[] = [];
    for (const name of names.filter((entry) => SEGMENT.test(entry)).sort()) {
      const bytes = (await stat(path.join(this.dir, name))).size;
      found.push({ name, records: Number(SEGMENT.exec(name)![3]), bytes });
    }
    this.#segments = found;
    this.#bytes = found.reduce((sum, segment) => sum + segment.bytes, 0);
  }
}
