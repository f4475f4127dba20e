// downstream: connections to the MCP servers behind loadout — start (lazily, single-flight),
// send requests (one RequestLayer per connection), idle-stop, report connection events. Does not
// know about catalogs or toolsets.
export { CLIENT_CAPABILITIES } from './connection.js';
export { refusesAccess, serverCrashOf } from './connectionErrors.js';
export {
  ListFailureSchema,
  OPTIONAL_LIST_NAMES,
  isListOf,
  isUnimplementedList,
  type ListFailure,
  type ListFailures,
  type OptionalList,
  type ServerAbout,
  type ServerDefinitions,
} from './serverDefinitions.js';
export type { DownstreamCaller, RelayedRequest } from './inFlightCallers.js';
export type { Progress } from './requestLayer.js';
export { stderrBlock } from './stderrTail.js';
export { SpawnFailure } from './childProcessTransport.js';
export { sandboxProblem } from './sandbox.js';
export { ServerPool, type PoolEvent } from './pool.js';
export { EraVerdictSchema, type EraMemory, type EraVerdict, type ProtocolEra } from './era.js';
export { ServerHealth } from './health.js';
export { loginToServer } from './oauthLogin.js';
export { oauthTargetOf } from './oauthProvider.js';
export { fileOAuthRecords, holdsUsableTokens, storeOAuthRecords, type AllOAuthRecords, type OAuthRecords } from './oauthRecords.js';
export {
  AUTHORIZATION_CALLBACK_PATH,
  AUTHORIZATION_START_PATH,
  type AuthorizationLink,
  type PrincipalAuthorizations,
} from './principalAuthorizations.js';
export { PrincipalAuthorizationNeeded } from './principalConnections.js';
