// identity: who is calling and what they may do. Principals (issuer, subject, groups), checking
// OAuth access tokens as a resource server, and the protected-resource metadata that tells a
// client where to get one. Knows nothing of MCP sessions or the catalog.
export { LOCAL_PRINCIPAL, STATIC_TOKEN_ISSUER, issuedPrincipal, staticTokenPrincipal, type Principal } from './principal.js';
export { createAccessTokenVerifier, groupsOf, type AccessTokenVerifier, type TokenCheck } from './accessTokens.js';
export { bearerChallenge, protectedResourceMetadata, protectedResourcePaths } from './protectedResource.js';
export { Policy, type Grants } from './policy.js';
export { CallLimits, type LimitRefusal } from './callLimits.js';
export { FleetLimits, SHARED_LIMIT_RETRY_MS, SHARED_LIMIT_WAIT_MS } from './fleetLimits.js';
