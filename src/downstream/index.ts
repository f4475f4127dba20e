// downstream: connections to the MCP servers behind loadout — start (lazily, single-flight),
// forward, idle-stop, report connection events. Does not know about catalogs or toolsets.
export { DownstreamConnection, CLIENT_INFO, CLIENT_CAPABILITIES, type CallOptions, type DownstreamCaller, type RelayedRequest } from './connection.js';
export { ServerPool, type PoolEvent, type PoolOptions, type ServerRuntimeStatus } from './pool.js';
export { ServerHealth, reconnectDelayMs, type HealthOptions, type HealthPool, type AvailabilityListener } from './health.js';
export { StoredOAuthProvider, needsAuthorizationError, type OAuthLogin, type OAuthTarget } from './oauthProvider.js';
export { loginToServer, type OAuthLoginOptions } from './oauthLogin.js';
