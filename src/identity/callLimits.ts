// Rate limits (`limits:` of servers.yaml): a token bucket per principal, and one per principal and
// server, each holding a minute's worth of calls and refilled evenly. Counted in this process's
// memory: N replicas each count their own, until the store counts them. A full bucket is the same
// as none, so buckets idle long enough to refill are dropped: memory follows active principals.
import type { LimitsSettings } from '../config/index.js';

/** A call refused for a limit: which one, and how long until a call would be let through. */
export interface LimitRefusal {
  /** `calls_per_minute`, or the server's own limit. */
  readonly limit: 'calls_per_minute' | 'server_calls_per_minute';
  readonly callsPerMinute: number;
  /** The server whose limit it is (for server_calls_per_minute). */
  readonly server?: string;
  readonly retryAfterMs: number;
}

/** A bucket a call is counted against: its key, and the refusal it answers when spent (but for when to retry). */
export interface LimitedBucket {
  readonly key: string;
  readonly refusal: Omit<LimitRefusal, 'retryAfterMs'>;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms, the clock's). */
  at: number;
  /** The limit it was last counted against. */
  perMinute: number;
  /** The server of a principal-on-server bucket; undefined for the principal's own. */
  readonly server: string | undefined;
}

// Buckets kept before the full ones are swept out (at most once a minute); past it, principals that called in the last minute, or a lowered limit overdrew, hold one.
const SWEEP_AT_BUCKETS = 10_000;

/** The limits in force, and what each principal has used of them. */
export class CallLimits {
  #settings: LimitsSettings;
  #limits: boolean;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  /** When the full buckets were last swept out (the clock's ms). */
  #sweptAt: number | undefined;

  constructor(settings: LimitsSettings, now: () => number = () => performance.now()) {
    this.#settings = settings;
    this.#limits = anyLimit(settings);
    this.#now = now;
  }

  /** Adopt edited limits; what each principal has used carries over. */
  update(settings: LimitsSettings): void {
    this.#settings = settings;
    this.#limits = anyLimit(settings);
  }

  /** Whether any limit is set. */
  get enabled(): boolean {
    return this.#limits;
  }

  /**
   * Count one call of `principalId` (of `server`'s tool, if any; `counted: true` when the call
   * was counted already against the caller's own limit, as call-tool's is before it reaches a server). Undefined when it may go
   * on; else the limit it would pass, and nothing is counted.
   */
  take(principalId: string, server?: string, options: { counted?: boolean } = {}): LimitRefusal | undefined {
    return this.#check(principalId, server, options.counted === true, true);
  }

  /**
   * The limit a call of `principalId` (of `server`'s tool, if any) would pass now, counting
   * nothing: for a way in that must answer a refusal before the call reaches where it is counted
   * (HTTP's 429, sent before the MCP layer reads the request).
   */
  peek(principalId: string, server?: string): LimitRefusal | undefined {
    return this.#check(principalId, server, false, false);
  }

  /**
   * The buckets a call of `principalId` (of `server`'s tool, if any) is counted against, with
   * their limits: the principal's (unless `counted` already), then the principal's on `server`.
   */
  bucketsOf(principalId: string, server: string | undefined, counted: boolean): LimitedBucket[] {
    if (!this.#limits) return [];
    const settings = this.#settings;
    const buckets: LimitedBucket[] = [];
    if (!counted && settings.calls_per_minute !== undefined)
      buckets.push({ key: principalId, refusal: { limit: 'calls_per_minute', callsPerMinute: settings.calls_per_minute } });
    const perServer = server === undefined ? undefined : this.#perServer(server);
    if (perServer !== undefined)
      buckets.push({
        key: `${principalId}\n${server}`,
        refusal: { limit: 'server_calls_per_minute', callsPerMinute: perServer, server: server! },
      });
    return buckets;
  }

  #check(principalId: string, server: string | undefined, counted: boolean, count: boolean): LimitRefusal | undefined {
    const now = this.#now();
    const buckets = this.bucketsOf(principalId, server, counted).map(({ key, refusal }) => ({
      refusal,
      bucket: this.#bucket(key, refusal, now),
    }));
    const spent = buckets.find(({ bucket }) => bucket.tokens < 1);
    if (spent) return { ...spent.refusal, retryAfterMs: untilOne(spent.bucket, spent.refusal.callsPerMinute) };
    if (count) for (const { bucket } of buckets) bucket.tokens -= 1;
    return undefined;
  }

  // The bucket of `key`, refilled up to now at the limit of `refusal`.
  #bucket(key: string, { callsPerMinute: perMinute, server }: LimitedBucket['refusal'], now: number): Bucket {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= SWEEP_AT_BUCKETS) this.#sweep(now);
      this.#buckets.set(key, (bucket = { tokens: perMinute, at: now, perMinute, server }));
      return bucket;
    }
    bucket.tokens = refilled(bucket, perMinute, now);
    bucket.perMinute = perMinute;
    bucket.at = now;
    return bucket;
  }

  // The limit of a principal's calls of `server`'s tools: its own, else the one for every server.
  #perServer(server: string): number | undefined {
    return this.#settings.servers[server] ?? this.#settings.server_calls_per_minute;
  }

  // Drop the buckets that have refilled in full at the limit in force now (a lowered limit may
  // have overdrawn one for minutes): they are what a new one would be. At most once a minute, as
  // buckets refill with time only: past the bound, a newcomer does not scan the map each time.
  #sweep(now: number): void {
    if (this.#sweptAt !== undefined && now - this.#sweptAt < 60_000) return;
    this.#sweptAt = now;
    for (const [key, bucket] of this.#buckets) {
      const perMinute = bucket.server === undefined ? this.#settings.calls_per_minute : this.#perServer(bucket.server);
      if (perMinute === undefined || refilled(bucket, perMinute, now) >= perMinute) this.#buckets.delete(key);
    }
  }
}

// The calls `bucket` holds at `now` under a limit of `perMinute`: an edited limit keeps what was
// used of the old one (a lowered one may be overdrawn), and it refills evenly up to the limit.
function refilled(bucket: Bucket, perMinute: number, now: number): number {
  return Math.min(perMinute, bucket.tokens + perMinute - bucket.perMinute + ((now - bucket.at) * perMinute) / 60_000);
}

function anyLimit(settings: LimitsSettings): boolean {
  return (
    settings.calls_per_minute !== undefined || settings.server_calls_per_minute !== undefined || Object.keys(settings.servers).length > 0
  );
}

function untilOne(bucket: Bucket, perMinute: number): number {
  return Math.ceil(((1 - bucket.tokens) * 60_000) / perMinute);
}
