// What a ServerPool tells and takes: the events of its connections, a server's status for
// displays, how one start goes, and the pool's options.
import type { Logger } from '../shared/index.js';
import type { ProtocolEra } from './era.js';
import type { OAuthRecords } from './oauthRecords.js';
import type { Telemetry } from '../telemetry/index.js';

/** What happened to a server's connection. */
export type PoolEvent =
  | { type: 'connected'; server: string }
  /** The connection ended without loadout asking (crash, remote close). */
  | { type: 'lost'; server: string }
  /** loadout ended the connection (idle, config change, shutdown). */
  | { type: 'stopped'; server: string }
  /** The server configs were replaced (configure()). */
  | { type: 'configured' }
  /** The server sent `notifications/tools/list_changed`: its tools should be re-listed. */
  | { type: 'tools-changed'; server: string }
  /** Any notification from the server but progress of one of loadout's requests (list_changed too). */
  | { type: 'notification'; server: string; notification: { method: string; params?: Record<string, unknown> } };

/** Snapshot of one server's connection for status displays. */
export interface ServerRuntimeStatus {
  state: 'stopped' | 'starting' | 'connected';
  inFlight: number;
  /** The era of the live connection. */
  era?: ProtocolEra;
  lastError?: string;
}

/** How to start a server; `probeEra` ignores the era found before (`loadout refresh` probes again). */
export interface StartOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  probeEra?: boolean;
}

/** Options of a pool; `env` is the environment `${VAR}` references are expanded from. */
export interface PoolOptions {
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /**
   * Least time a start (spawn + handshake) may take, whatever the server's call timeout: an
   * `npx` server can need many seconds to start although its calls answer in one.
   */
  minStartTimeoutMs?: number;
  /** Where OAuth records of HTTP servers live (files or the team store); without them no server gets OAuth. */
  oauthRecords?: OAuthRecords;
  /** Where each connection's requests are traced and measured; default: off. */
  telemetry?: Telemetry;
  /** loadout's own config and data dirs (secrets.env, tokens, the store's key): no sandboxed server may read them. */
  protectedDirs?: readonly string[];
}
