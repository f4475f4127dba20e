// Servers loadout could not discover, remembered in `<data dir>/discovery.json` across starts: when
// the last attempt failed, why, and when to try again, so a new `serve` neither waits for nor
// hammers a server that failed a moment ago. Written by serve and refresh, read by status. An
// entry whose server config has changed since is ignored: the new config deserves a fresh try.
// A failure for want of a login is forgotten once the server's tokens are usable: a login (`loadout
// auth`), a discovery or a connection made with them (recordAuthorized).
// Each failure is kept with its code (version 2); a version 1 file is read, and upgraded when next written.
// Where the records are kept is a DiscoveryRecordsPlace: the store's `discovery` records, one per
// server (storedDiscoveryRecords.ts), which the files store keeps in that file.
import { createHash } from 'node:crypto';
import type { DiscoveryRecord, ServerConfig } from '../config/index.js';
import { backoffDelayMs, type Failure } from '../shared/index.js';

// Waits before the next try after 1, 2, 3… failures in a row: 30 s doubling up to 30 min (jittered).
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 30 * 60_000;

/** The last failed discovery of one server. */
export type { DiscoveryRecord };

/** The outcome of one attempt, as recordDiscoveryOutcomes takes it. */
export type DiscoveryOutcome = { server: string; ok: true } | { server: string; ok: false; failure: Failure };

/** Where the records are kept: read whole or by server, and changed server by server with no concurrent writer undone. */
export interface DiscoveryRecordsPlace {
  /** Every server's record. */
  read(): Promise<Record<string, DiscoveryRecord>>;
  /** One server's record; undefined when it has none. */
  get(server: string): Promise<DiscoveryRecord | undefined>;
  /**
   * Give each of `servers`, in order, the record `change` makes of its current one (undefined:
   * none, or forget it). `change` may be asked more than once for a server (first of "none", to
   * tell whether anything is to be written at all).
   */
  update(
    servers: readonly string[],
    change: (server: string, record: DiscoveryRecord | undefined) => DiscoveryRecord | undefined,
  ): Promise<void>;
}

/** The records of servers in `configs` whose config is unchanged since their failure. */
export async function readDiscoveryRecords(
  place: DiscoveryRecordsPlace,
  configs: Readonly<Record<string, ServerConfig>>,
): Promise<Map<string, DiscoveryRecord>> {
  return current(await place.read(), configs);
}

/** The record of `server`, unless it has none or its config changed since (readDiscoveryRecords for one server). */
export async function readDiscoveryRecord(
  place: DiscoveryRecordsPlace,
  server: string,
  configs: Readonly<Record<string, ServerConfig>>,
): Promise<DiscoveryRecord | undefined> {
  const record = await place.get(server);
  return record && current({ [server]: record }, configs).get(server);
}

/**
 * Record attempts: a success forgets the server, a failure counts one more and sets the next try.
 * Returns the records of the servers that failed.
 */
export async function recordDiscoveryOutcomes(
  place: DiscoveryRecordsPlace,
  configs: Readonly<Record<string, ServerConfig>>,
  outcomes: readonly DiscoveryOutcome[],
  now = Date.now(),
): Promise<Map<string, DiscoveryRecord>> {
  const failed = new Map<string, DiscoveryRecord>();
  const outcomeOf = new Map(outcomes.map((outcome) => [outcome.server, outcome]));
  await place.update([...outcomeOf.keys()], (server, record) => {
    const outcome = outcomeOf.get(server)!;
    const config = Object.hasOwn(configs, server) ? configs[server] : undefined;
    if (outcome.ok || !config) return undefined;
    const next = failedRecord(record && current({ [server]: record }, configs).get(server), outcome.failure, config, now);
    failed.set(server, next);
    return next;
  });
  return failed;
}

/**
 * Forget `server`'s failure for want of a login when it was recorded before `authorizedAt`, when a
 * connection was made with its tokens as they were then: they are usable now, whatever the record
 * says. Any other record stands (a connection says nothing of a listing's failure), and is not written.
 */
export async function recordAuthorized(place: DiscoveryRecordsPlace, server: string, authorizedAt: number): Promise<void> {
  const superseded = (record: DiscoveryRecord | undefined): boolean =>
    record?.failure.code === 'NEEDS_AUTHORIZATION' && Date.parse(record.failedAt) <= authorizedAt;
  if (!superseded(await place.get(server))) return;
  await place.update([server], (_server, record) => (superseded(record) ? undefined : record));
}

/** The record after one more failure of a server whose last record was `previous`. */
export function failedRecord(previous: DiscoveryRecord | undefined, failure: Failure, config: ServerConfig, now: number): DiscoveryRecord {
  const failures = (previous?.failures ?? 0) + 1;
  return {
    failedAt: new Date(now).toISOString(),
    failures,
    retryAt: new Date(now + backoffDelayMs(failures - 1, RETRY_BASE_MS, RETRY_MAX_MS)).toISOString(),
    failure,
    config: configKey(config),
  };
}

// A hash of what decides how a server starts (its `tools:` map is loadout's own bookkeeping).
function configKey(config: ServerConfig): string {
  const { tools: _tools, ...start } = config;
  return createHash('sha256').update(JSON.stringify(start)).digest('hex').slice(0, 16);
}

function current(servers: Record<string, DiscoveryRecord>, configs: Readonly<Record<string, ServerConfig>>): Map<string, DiscoveryRecord> {
  return new Map(
    Object.entries(servers).filter(([server, record]) => {
      const config = Object.hasOwn(configs, server) ? configs[server] : undefined;
      return config !== undefined && record.config === configKey(config);
    }),
  );
}
