// The rate limits a gateway enforces: counted in the shared store when there is one (Postgres
// mode: one statement per limited call, so N replicas enforce one limit), else in this process
// (CallLimits). No limit set: nothing is counted and the store is never asked.
//
// The store unreachable or slow: FAIL OPEN to this process's own count. A limit protects the
// servers behind from overuse, it is not who may call what (that is the policy, which never
// fails open); refusing every call while the store is away would turn a database outage into a
// tool outage. Each replica then enforces the limit alone (a principal gets at most N times it)
// until the store answers again; both turns are logged once.
import type { LimitsSettings } from '../config/index.js';
import type { LimitBuckets } from '../store/index.js';
import { errorMessage, untilAborted, type Logger } from '../shared/index.js';
import { CallLimits, type LimitRefusal } from './callLimits.js';

/** How long a call waits for the store's count before it is counted here instead. */
export const SHARED_LIMIT_WAIT_MS = 500;
/** After the store failed to count, calls are counted here this long before it is asked again. */
export const SHARED_LIMIT_RETRY_MS = 5000;

/** Options of FleetLimits. */
export interface FleetLimitsOptions {
  /** The store's buckets (Postgres mode); without, each process counts its own. */
  readonly shared?: LimitBuckets;
  readonly logger: Logger;
  /** The clock of the local buckets (tests). */
  readonly now?: () => number;
}

/** The limits in force, counted for the fleet where the store is shared. */
export class FleetLimits {
  readonly #local: CallLimits;
  readonly #shared: LimitBuckets | undefined;
  readonly #logger: Logger;
  /** While the store is away: until when (performance.now()) calls are counted here without asking it. */
  #localUntil: number | undefined;

  constructor(settings: LimitsSettings, options: FleetLimitsOptions) {
    this.#local = new CallLimits(settings, options.now);
    this.#shared = options.shared;
    this.#logger = options.logger;
  }

  /** Adopt edited limits; what each principal has used carries over. */
  update(settings: LimitsSettings): void {
    this.#local.update(settings);
  }

  /** Whether any limit is set. */
  get enabled(): boolean {
    return this.#local.enabled;
  }

  /** Count one call (CallLimits.take); undefined when it may go on, else the limit it would pass. */
  take(principalId: string, server?: string, options: { counted?: boolean } = {}): Promise<LimitRefusal | undefined> {
    return this.#count(principalId, server, options.counted === true, true);
  }

  /** The limit a call would pass now, counting nothing (CallLimits.peek). */
  peek(principalId: string, server?: string): Promise<LimitRefusal | undefined> {
    return this.#count(principalId, server, false, false);
  }

  async #count(principalId: string, server: string | undefined, counted: boolean, count: boolean): Promise<LimitRefusal | undefined> {
    const local = (): LimitRefusal | undefined =>
      count ? this.#local.take(principalId, server, { counted }) : this.#local.peek(principalId, server);
    if (!this.#shared || (this.#localUntil !== undefined && performance.now() < this.#localUntil)) return local();
    const buckets = this.#local.bucketsOf(principalId, server, counted);
    if (buckets.length === 0) return undefined;
    let waitsMs: number[];
    try {
      waitsMs = await untilAborted(
        this.#shared.take(
          buckets.map((bucket) => bucket.key),
          buckets.map((bucket) => bucket.refusal.callsPerMinute),
          count,
        ),
        AbortSignal.timeout(SHARED_LIMIT_WAIT_MS),
      );
    } catch (error) {
      if (this.#localUntil === undefined)
        this.#logger.error(
          { mod: 'limits', err: errorMessage(error) },
          'rate limits cannot be counted in the store; each replica counts its own until it answers',
        );
      this.#localUntil = performance.now() + SHARED_LIMIT_RETRY_MS;
      return local();
    }
    if (this.#localUntil !== undefined) {
      this.#localUntil = undefined;
      this.#logger.warn({ mod: 'limits' }, 'rate limits are counted in the store again');
    }
    const spent = waitsMs.findIndex((waitMs) => waitMs > 0);
    return spent < 0 ? undefined : { ...buckets[spent]!.refusal, retryAfterMs: waitsMs[spent]! };
  }
}
