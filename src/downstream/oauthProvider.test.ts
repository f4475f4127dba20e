// What a server's OAuth provider writes: never the value of a `${VAR}` of the server's url, in the
// record's URL or in discovery state found from the expanded URL.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../config/index.js';
import { StoredOAuthProvider, oauthTargetOf, type OAuthTarget } from './oauthProvider.js';
import { fileOAuthRecords } from './oauthRecords.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

const KEY = 'k3y-in-the-path';

describe('StoredOAuthProvider', () => {
  const tempDir = useTempDir('loadout-oauth-provider-');
  let target: OAuthTarget;
  beforeEach(() => {
    const config = ServerConfigSchema.parse({ type: 'http', url: 'https://mcp.example/u/${USER_KEY}/mcp' });
    target = oauthTargetOf('keyed', config, { USER_KEY: KEY }, fileOAuthRecords(path.join(tempDir(), 'oauth')))!;
  });

  it('sends the expanded url, and keeps the record under the url as configured', () => {
    expect(target).toMatchObject({ serverUrl: `https://mcp.example/u/${KEY}/mcp`, recordUrl: 'https://mcp.example/u/${USER_KEY}/mcp' });
  });

  it('keeps discovery state that holds a ${VAR} value in memory only, and writes the rest', async () => {
    const provider = await StoredOAuthProvider.open(target);
    const keyed = {
      authorizationServerUrl: 'https://auth.example/',
      resourceMetadataUrl: `https://mcp.example/.well-known/oauth-protected-resource/u/${KEY}/mcp`,
    };
    await provider.saveDiscoveryState(keyed);
    await provider.saveTokens({ access_token: 'a', token_type: 'Bearer' });
    expect(await provider.discoveryState()).toEqual(keyed);
    const file = path.join(tempDir(), 'oauth', 'keyed.json');
    expect(await readFile(file, 'utf8')).not.toContain(KEY);

    const plain = { authorizationServerUrl: 'https://auth.example/' };
    await provider.saveDiscoveryState(plain);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ serverUrl: target.recordUrl, discoveryState: plain });
  });
});
