// The shapes of `auth:` (who loadout trusts to say who is calling, over HTTP) and `policy:` (who
// may see and use what) in servers.yaml. Only shapes: checking tokens and applying rules is the
// identity layer's job.
import * as z from 'zod';
import { fileObject } from './fileObject.js';

/** `auth:` — loadout as an OAuth 2.1 resource server: JWT access tokens from one issuer. */
export const AuthSettingsSchema = fileObject({
  /** The authorization server's issuer URL, exactly as its tokens' `iss` says it. */
  issuer: z.url(),
  /** loadout's own canonical URL (RFC 8707), the only audience accepted; default: the URL it serves /mcp at. */
  audience: z.url().optional(),
  /** Scopes every token must carry; fewer get 403 insufficient_scope. */
  scopes: z.array(z.string().min(1)).default([]),
  /** The token claim that lists the caller's groups (an array of strings, or one space-separated string). */
  groups_claim: z.string().min(1).default('groups'),
  /** The issuer's key set; default: the `jwks_uri` of its published metadata. */
  jwks_uri: z.url().optional(),
});
export type AuthSettings = z.infer<typeof AuthSettingsSchema>;
