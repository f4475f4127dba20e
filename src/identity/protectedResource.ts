// loadout's face as an OAuth protected resource (RFC 9728): the metadata document naming its
// authorization server, where it is published, and the WWW-Authenticate challenge of a refusal,
// which points the client at that document.
import type { AuthSettings } from '../config/index.js';
import type { TokenCheck } from './accessTokens.js';

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** RFC 9728 metadata of the resource `resource` (loadout's canonical URL). */
export function protectedResourceMetadata(resource: string, settings: AuthSettings): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [settings.issuer],
    bearer_methods_supported: ['header'],
    ...(settings.scopes.length > 0 ? { scopes_supported: settings.scopes } : {}),
    resource_name: 'loadout',
  };
}

/**
 * The paths the metadata is published at: the well-known path with the resource's path inserted
 * (RFC 9728 §3.1, `/.well-known/oauth-protected-resource/mcp`), which the challenge names, and
 * the bare well-known path for clients that look there first.
 */
export function protectedResourcePaths(resource: string): { named: string; all: ReadonlySet<string> } {
  const resourcePath = new URL(resource).pathname.replace(/\/+$/, '');
  const named = `${WELL_KNOWN}${resourcePath}`;
  return { named, all: new Set([named, WELL_KNOWN]) };
}

/** The `WWW-Authenticate` value of a refusal (or of a request that carried no token). */
export function bearerChallenge(metadataUrl: string, refusal?: Extract<TokenCheck, { ok: false }>): string {
  const parts = [`resource_metadata="${metadataUrl}"`];
  if (refusal && refusal.status !== 503) {
    parts.push(`error="${refusal.error}"`, `error_description="${refusal.description.replaceAll('"', "'")}"`);
    if (refusal.status === 403) parts.push(`scope="${refusal.scope}"`);
  }
  return `Bearer ${parts.join(', ')}`;
}
