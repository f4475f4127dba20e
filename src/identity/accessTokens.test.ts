import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthSettingsSchema } from '../config/index.js';
import { createAccessTokenVerifier } from './accessTokens.js';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'https://loadout.example/mcp';

// An issuer whose metadata and keys are answered from memory, counting the key fetches.
async function issuer() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256' }] };
  const counts = { jwks: 0 };
  const fetch = (input: string | URL | Request): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.endsWith('/jwks')) counts.jwks++;
    const body = url.endsWith('/jwks') ? jwks : { issuer: ISSUER, jwks_uri: `${ISSUER}/jwks` };
    return Promise.resolve(new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } }));
  };
  const sign = (expiresAtSeconds: number) =>
    new SignJWT({ scope: 'mcp:tools', groups: ['eng'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'k' })
      .setIssuer(ISSUER)
      .setSubject('alice')
      .setAudience(AUDIENCE)
      .setExpirationTime(expiresAtSeconds)
      .sign(privateKey);
  return { fetch, sign, counts };
}

describe('access token verifier', () => {
  it('accepts a token once checked until its exp, then refuses it as expired', async () => {
    const { fetch, sign } = await issuer();
    let nowMs = Date.now();
    const verifier = createAccessTokenVerifier(AuthSettingsSchema.parse({ issuer: ISSUER, scopes: ['mcp:tools'] }), AUDIENCE, {
      fetch: fetch,
      now: () => nowMs,
      clockToleranceSeconds: 0,
    });
    const expiresAtSeconds = Math.floor(nowMs / 1000) + 60;
    const token = await sign(expiresAtSeconds);
    const first = await verifier.verify(token);
    expect(first).toMatchObject({ ok: true, principal: { subject: 'alice', groups: ['eng'], issuer: ISSUER } });
    expect(await verifier.verify(token)).toBe(first);
    // Past its exp the remembered answer is dropped and the token checked anew.
    nowMs = expiresAtSeconds * 1000 + 1000;
    expect(await verifier.verify(token)).toMatchObject({ ok: false, status: 401, description: 'the token has expired' });
  });

  it('keeps the tokens in use when it remembers its most: the least recently used one goes', async () => {
    const { fetch, sign } = await issuer();
    const verifier = createAccessTokenVerifier(AuthSettingsSchema.parse({ issuer: ISSUER }), AUDIENCE, { fetch });
    const expiresAtSeconds = Math.floor(Date.now() / 1000) + 3600;
    const busy = await sign(expiresAtSeconds);
    const first = await verifier.verify(busy);
    // 999 more fill the 1000 it remembers; the busy token is used again, then one more arrives.
    for (let i = 1; i < 1000; i++) await verifier.verify(await sign(expiresAtSeconds + i));
    expect(await verifier.verify(busy)).toBe(first);
    await verifier.verify(await sign(expiresAtSeconds + 1000));
    expect(await verifier.verify(busy)).toBe(first);
  });

  it('refuses an expired token', async () => {
    const { fetch, sign } = await issuer();
    const verifier = createAccessTokenVerifier(AuthSettingsSchema.parse({ issuer: ISSUER }), AUDIENCE, {
      fetch: fetch,
      clockToleranceSeconds: 0,
    });
    const expired = await sign(Math.floor(Date.now() / 1000) - 5);
    expect(await verifier.verify(expired)).toMatchObject({ ok: false, status: 401, description: 'the token has expired' });
  });
});
