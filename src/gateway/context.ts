// The services every client session shares: one pool of downstream connections, one catalog,
// the toolset store, the toolset remembered for the next start, the audit trail and rate limits; built once by createGateway. A
// principal's view of them (policyViews.ts) names that principal and holds only its grants.
import type { AuditTrail } from '../audit/index.js';
import type { CatalogStore } from '../catalog/index.js';
import type { GatewaySettings, LoadoutPaths } from '../config/index.js';
import type { ServerPool } from '../downstream/index.js';
import type { FleetLimits, Grants, Principal } from '../identity/index.js';
import type { NamingOptions } from '../registry/index.js';
import type { OptimizationLoop } from '../optimization/index.js';
import type { BackgroundDiscovery } from '../runtime/index.js';
import type { Logger } from '../shared/index.js';
import type { Telemetry } from '../telemetry/index.js';
import type { Toolsets } from '../toolsets/index.js';
import type { InputRounds } from './inputRounds.js';
import type { ClientHabits } from './clientHabits.js';
import type { LastStop } from './lastStop.js';
import type { ResourceRoutes } from './resourcePages.js';
import type { SessionHub } from './sessionHub.js';
import type { TaskRoutes } from './taskRoutes.js';

/** Shared gateway services, handed to sessions and meta-tools. */
export interface GatewayContext {
  readonly paths: LoadoutPaths;
  readonly settings: GatewaySettings;
  readonly logger: Logger;
  readonly pool: ServerPool;
  readonly catalog: CatalogStore;
  /** The saved toolsets this principal may have: every one for the local caller, its own and the shared ones for an identified one. */
  readonly toolsets: Toolsets;
  /** The toolset this principal equipped at its last stop, which its new session is given (lastStop.ts). */
  readonly lastStop: LastStop;
  /** What each client's earlier sessions learned of its re-list habit (clientHabits.ts). */
  readonly clients: ClientHabits;
  readonly naming: NamingOptions;
  /** Tool-description optimization: stored data, promotions, settings. */
  readonly optimization: OptimizationLoop;
  /** Discovery of the servers the cached catalog lacks, and what each is waiting for. */
  readonly discovery: BackgroundDiscovery;
  /** The catalog's readiness (BackgroundDiscovery.ready): cache loaded, servers never tried before given a few seconds. */
  ready(): Promise<void>;
  /** False while a server is known to be down (its tools are withdrawn). */
  isServerAvailable(server: string): boolean;
  /** Client-facing resource URIs → owning server. */
  readonly resourceRoutes: ResourceRoutes;
  /** Subscriptions, logging levels and notification fan-out shared by the sessions. */
  readonly hub: SessionHub;
  /** Loadout task ids ↔ owning session and downstream task. */
  readonly tasks: TaskRoutes;
  /** 2026-07-28 calls waiting for their client's retry with the input a server asked for. */
  readonly inputRounds: InputRounds;
  /** Whose view of the gateway this is (policyViews.ts): the caller its sessions serve. */
  readonly principal: Principal;
  /** What `policy:` grants this principal now (undefined: everything); read by what a new policy takes from running sessions (revocation.ts). */
  readonly grants: Grants | undefined;
  /** Whether `policy:` hides a tool of this name from this principal (its call is refused as an unknown one, and audited as denied). */
  hiddenByPolicy(name: string): boolean;
  /** Whether `policy:` hides the prompt of this exposed name, or the resource of this URI, from this principal (refused as unknown, audited as denied). */
  hiddenContent(kind: 'prompt' | 'resource', nameOrUri: string): boolean;
  /** Where calls are recorded after their answer. */
  readonly audit: AuditTrail;
  /** The rate limits each principal's calls are counted against. */
  readonly limits: FleetLimits;
  /** The gateway's telemetry (createGateway's option): its spans and metrics, off by default. */
  readonly telemetry: Telemetry;
}
