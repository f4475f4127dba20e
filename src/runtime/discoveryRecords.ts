// Servers loadout could not discover, remembered in `<data dir>/discovery.json` across starts: when
// the last attempt failed, why, and when to try again, so a new `serve` neither waits for nor
// hammers a server that failed a moment ago. Written by serve and refresh, read by status. An
// entry whose server config has changed since is ignored: the new config deserves a fresh try.
// Each failure is kept with its code (version 2); a version 1 file is read, and upgraded when next written.
import { createHash } from 'node:crypto';
import path from 'node:path';
import {
  discoveryFileText,
  parseDiscoveryFile,
  readTextIfExists,
  updateTextFile,
  type DiscoveryRecord,
  type LoadoutPaths,
  type ServerConfig,
} from '../config/index.js';
import { backoffDelayMs, type Failure } from '../shared/index.js';

// Waits before the next try after 1, 2, 3… failures in a row: 30 s doubling up to 30 min (jittered).
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 30 * 60_000;

/** The last failed discovery of one server. */
export type { DiscoveryRecord };

/** The outcome of one attempt, as recordDiscoveryOutcomes takes it. */
export type DiscoveryOutcome = { server: string; ok: true } | { server: string; ok: false; failure: Failure };

/** Where the records of a data dir live. */
export function discoveryRecordsFile(paths: Pick<LoadoutPaths, 'dataDir'>): string {
  return path.join(paths.dataDir, 'discovery.json');
}

/** The records of servers in `configs` whose config is unchanged since their failure. */
export async function readDiscoveryRecords(
  file: string,
  configs: Readonly<Record<string, ServerConfig>>,
): Promise<Map<string, DiscoveryRecord>> {
  return current(parseDiscoveryFile(await readTextIfExists(file)), configs);
}

/**
 * Record attempts: a success forgets the server, a failure counts one more and sets the next try.
 * Returns the records of the servers that failed.
 */
export async function recordDiscoveryOutcomes(
  file: string,
  configs: Readonly<Record<string, ServerConfig>>,
  outcomes: readonly DiscoveryOutcome[],
  now = Date.now(),
): Promise<Map<string, DiscoveryRecord>> {
  const failed = new Map<string, DiscoveryRecord>();
  await updateTextFile(file, (text) => {
    const servers = parseDiscoveryFile(text);
    const previous = current(servers, configs);
    for (const outcome of outcomes) {
      const config = configs[outcome.server];
      if (outcome.ok || !config) {
        delete servers[outcome.server];
        continue;
      }
      const record = failedRecord(previous.get(outcome.server), outcome.failure, config, now);
      servers[outcome.server] = record;
      failed.set(outcome.server, record);
    }
    return discoveryFileText(servers);
  });
  return failed;
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
