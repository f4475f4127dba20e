// A replica's heartbeat in Postgres mode: its row in replica_heartbeats written at start and every
// REPLICA_HEARTBEAT_MS after, on a timer of its own (never on a call's path), and deleted at close.
// A beat that fails (the store is down) is logged and the next one tries again.
import { hostname } from 'node:os';
import { LOADOUT_VERSION, errorMessage, type Logger } from '../shared/index.js';
import type { ReplicaHeartbeat, ReplicaTable } from '../store/index.js';

/** How often a replica writes its heartbeat. */
export const REPLICA_HEARTBEAT_MS = 10_000;
/** How long a replica may be silent before status leaves it out: three missed beats. */
export const REPLICA_SILENT_MS = 30_000;

/** What the heartbeat reads of the replica at each beat. */
export interface ReplicaReadings {
  sessions(): number;
  listening(): boolean;
}

/** The heartbeat of one replica; start() writes the first beat, close() removes the row. */
export class ReplicaHeartbeats {
  readonly #table: ReplicaTable;
  readonly #readings: ReplicaReadings;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #facts: Omit<ReplicaHeartbeat, 'sessions' | 'listening'>;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> = Promise.resolve();
  #closed: Promise<void> | undefined;

  constructor(
    replicaId: string,
    table: ReplicaTable,
    readings: ReplicaReadings,
    options: { logger: Logger; intervalMs?: number; startedAt?: Date },
  ) {
    this.#table = table;
    this.#readings = readings;
    this.#log = options.logger.child({ mod: 'heartbeat' });
    this.#intervalMs = options.intervalMs ?? REPLICA_HEARTBEAT_MS;
    this.#facts = {
      id: replicaId,
      host: hostname(),
      pid: process.pid,
      version: LOADOUT_VERSION,
      started: (options.startedAt ?? new Date()).toISOString(),
    };
  }

  /** Write the first beat (a failure is logged, not thrown), then one every interval. */
  async start(): Promise<void> {
    await this.#beat();
    if (this.#closed) return;
    this.#timer = setInterval(() => {
      // One beat at a time: a slow store skips a beat rather than queueing them.
      this.#beating = this.#beating.then(() => this.#beat());
    }, this.#intervalMs).unref();
  }

  /** Stop beating and remove the row, so status drops the replica at once. Runs once. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      clearInterval(this.#timer);
      await this.#beating;
      await this.#table
        .forget(this.#facts.id)
        .catch((error: unknown) => this.#log.debug({ err: errorMessage(error) }, 'heartbeat not removed'));
    })();
    return this.#closed;
  }

  async #beat(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#table.beat({ ...this.#facts, sessions: this.#readings.sessions(), listening: this.#readings.listening() });
    } catch (error) {
      this.#log.warn({ err: errorMessage(error) }, 'heartbeat not written; trying again at the next beat');
    }
  }
}
