// downstream: connections to the MCP servers behind loadout — start (lazily, single-flight),
// send requests (one RequestLayer per connection), idle-stop, report connection events. Does not
// know about catalogs or toolsets.
export { DownstreamConnection, CLIENT_INFO, CLIENT_CAPABILITIES, type ServerDefinitions } from './connection.js';
export type { DownstreamCaller, RelayedRequest } from './inFlightCallers.js';
export type { RequestOptions, Progress } from './requestLayer.js';
export { ServerPool, type PoolEvent } from './pool.js';
export { ServerHealth } from './health.js';
export { StoredOAuthProvider, needsAuthorizationError, isNeedsAuthorizationMessage, type OAuthLogin, type OAuthTarget } from './oauthProvider.js';
export { loginToServer, type OAuthLoginOptions } from './oauthLogin.js';
