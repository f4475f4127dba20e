// The audit trail of one gateway: records handed in after each answer wait in memory and are
// written in batches (every `audit.flush_ms`, or at 512 records), so a call never waits on a
// write; a killed process loses at most the batch not yet written. A sink that fails is reported
// once with its cause (and again when it recovers, with the records it missed), never to the caller.
import path from 'node:path';
import type { AuditSettings } from '../config/index.js';
import { LoadoutError, errorMessage, type Logger } from '../shared/index.js';
import type { AuditTable } from '../store/index.js';
import { auditRecordOf, type AuditEvent, type AuditRecord } from './auditRecord.js';
import { auditDir, dayFilesSink, linesFileSink, linesStreamSink, type AuditSink, type DayLines } from './auditSinks.js';
import type { Telemetry } from '../telemetry/index.js';
import { AuditSpool, spoolDir } from './auditSpool.js';
import { SpooledStoreSink } from './spooledStoreSink.js';

/** Records written at once at most: a burst of calls is written as it comes, not held for the timer. */
const MAX_BATCH_RECORDS = 512;

/** Options of an AuditTrail. */
export interface AuditTrailOptions {
  readonly sinks: readonly AuditSink[];
  /** Records carry the arguments themselves, not only their digest. */
  readonly withArguments: boolean;
  readonly flushMs: number;
  readonly logger: Logger;
  /** The replica's id (the runtime's `replicaId`): every record names it, and its id begins with it. */
  readonly replica: string;
}

/** Where audit records go, batched. */
export class AuditTrail {
  readonly #options: AuditTrailOptions;
  #pending: AuditEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  // The last record's number: ids are `<replica>.<n>`, unique while replica ids are.
  #sequence = 0;
  // Sinks whose last write failed, with the records they have missed since.
  readonly #lost = new Map<AuditSink, number>();
  #closed: Promise<void> | undefined;

  constructor(options: AuditTrailOptions) {
    this.#options = options;
  }

  /** Whether records are kept at all (`audit.enabled`). */
  get enabled(): boolean {
    return this.#options.sinks.length > 0;
  }

  /** Keep `event`; it is written with the next batch. Cheap: nothing is serialized here. */
  record(event: AuditEvent): void {
    if (this.#closed || !this.enabled) return;
    this.#pending.push(event);
    if (this.#pending.length >= MAX_BATCH_RECORDS) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#options.flushMs).unref();
  }

  /** Write what is pending now; settles when it (and every batch before it) has been written or reported lost. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    if (batch.length === 0) return this.#writing;
    this.#pending = [];
    this.#writing = this.#writing.then(() => this.#write(batch));
    return this.#writing;
  }

  /** Write what is pending and take no more; each sink then settles what it holds. Runs once. */
  close(): Promise<void> {
    this.#closed ??= this.flush().then(async () => {
      await Promise.all(this.#options.sinks.map((sink) => sink.close?.() ?? Promise.resolve()));
    });
    return this.#closed;
  }

  async #write(batch: readonly AuditEvent[]): Promise<void> {
    const days = new Map<string, Array<{ record: AuditRecord; json: string }>>();
    const { replica } = this.#options;
    for (const event of batch) {
      const record = auditRecordOf(event, this.#options.withArguments, { id: `${replica}.${++this.#sequence}`, replica });
      const day = record.time.slice(0, 10);
      let records = days.get(day);
      if (!records) days.set(day, (records = []));
      records.push({ record, json: JSON.stringify(record) });
    }
    const grouped: DayLines[] = [...days].map(([day, records]) => ({ day, records }));
    await Promise.all(this.#options.sinks.map((sink) => this.#writeTo(sink, grouped, batch.length)));
  }

  async #writeTo(sink: AuditSink, batch: readonly DayLines[], records: number): Promise<void> {
    const log = this.#options.logger;
    try {
      await sink.write(batch);
    } catch (error) {
      const missed = this.#lost.get(sink);
      if (missed === undefined)
        log.error({ mod: 'audit', sink: sink.name, err: errorMessage(error) }, 'audit records cannot be written there; calls go on');
      this.#lost.set(sink, (missed ?? 0) + records);
      return;
    }
    const missed = this.#lost.get(sink);
    if (missed === undefined) return;
    this.#lost.delete(sink);
    log.warn({ mod: 'audit', sink: sink.name, lostRecords: missed }, 'audit records are written there again');
  }
}

/** Where `openAuditTrail` writes and what it may use. */
export interface AuditTrailPlaces {
  readonly dataDir: string;
  /** A relative `audit.copy_to` is read against it (as servers.yaml's other paths are). */
  readonly configDir: string;
  readonly logger: Logger;
  /** Whether stdout is free for records (serve --http); in stdio mode it carries the protocol. */
  readonly stdoutFree: boolean;
  /** The replica's id (the runtime's `replicaId`). */
  readonly replicaId: string;
  /** The store's audit table (Postgres mode): the trail is written there instead of the day files. */
  readonly store?: AuditTable;
  /** The gateway's telemetry, which reads the spool's figures (Postgres mode). */
  readonly telemetry?: Telemetry;
}

// The store's table behind the data dir's spool, its figures read by telemetry.
function spooledSink(settings: AuditSettings, places: AuditTrailPlaces, table: AuditTable): AuditSink {
  const spool = new AuditSpool(spoolDir(places.dataDir), settings.spool_max_mb * 1024 * 1024, places.replicaId);
  const sink = new SpooledStoreSink(table, spool, settings.retention_days, places.logger);
  places.telemetry?.watchAudit(sink);
  return sink;
}

/** The trail `audit:` asks for. Throws a CONFIG_INVALID LoadoutError for `copy_to: stdout` where stdout is the protocol. */
export function openAuditTrail(settings: AuditSettings, places: AuditTrailPlaces): AuditTrail {
  const sinks: AuditSink[] = [];
  if (settings.enabled) {
    sinks.push(
      places.store ? spooledSink(settings, places, places.store) : dayFilesSink(auditDir(places.dataDir), settings.retention_days),
    );
    const copy = settings.copy_to;
    if (copy === 'stdout') {
      if (!places.stdoutFree)
        throw new LoadoutError(
          'CONFIG_INVALID',
          'audit.copy_to: stdout needs `serve --http`: over stdio, stdout carries the protocol; name a file for the copy instead',
        );
      sinks.push(linesStreamSink(process.stdout, 'stdout'));
    } else if (copy !== undefined) sinks.push(linesFileSink(path.resolve(places.configDir, copy)));
  }
  return new AuditTrail({
    sinks,
    withArguments: settings.arguments,
    flushMs: settings.flush_ms,
    logger: places.logger,
    replica: places.replicaId,
  });
}
