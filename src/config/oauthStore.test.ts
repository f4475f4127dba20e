// The OAuth file of a server: private from its first byte, bound to the server URL, and which
// servers may use OAuth at all.
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { deleteOAuthRecord, oauthRecordFile, readOAuthRecord, updateOAuthRecord } from './oauthStore.js';
import { ServerConfigSchema, oauthSettingsOf } from './schema.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

describe('OAuth records', () => {
  const tempDir = useTempDir('loadout-oauth-');
  let file: string;
  beforeEach(() => {
    file = oauthRecordFile(path.join(tempDir(), 'oauth'), 'linear');
  });

  it('writes the file with mode 0600 in a 0700 directory', async () => {
    await updateOAuthRecord(file, 'https://a.example/mcp', (record) => ({
      ...record,
      tokens: { access_token: 't', token_type: 'Bearer' },
    }));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readOAuthRecord(file)).toMatchObject({ serverUrl: 'https://a.example/mcp', tokens: { access_token: 't' } });
  });

  it('starts from an empty record when the stored one belongs to another URL', async () => {
    await updateOAuthRecord(file, 'https://a.example/mcp', (record) => ({ ...record, tokens: { access_token: 'old' } }));
    const next = await updateOAuthRecord(file, 'https://b.example/mcp', (record) => record);
    expect(next).toEqual({ serverUrl: 'https://b.example/mcp' });
  });

  it('reads an unreadable file as no record, and deletes it on logout', async () => {
    await updateOAuthRecord(file, 'https://a.example/mcp', (record) => record);
    await writeFile(file, '{ not json');
    expect(await readOAuthRecord(file)).toBeUndefined();
    expect(await deleteOAuthRecord(file)).toBe(true);
    expect(await deleteOAuthRecord(file)).toBe(false);
  });
});

describe('oauthSettingsOf', () => {
  const server = (entry: Record<string, unknown>) => ServerConfigSchema.parse(entry);

  it('gives HTTP and SSE servers OAuth by default, with their settings when given', () => {
    expect(oauthSettingsOf(server({ url: 'https://a.example/mcp' }))).toEqual({});
    expect(oauthSettingsOf(server({ type: 'sse', url: 'https://a.example/sse', oauth: { client_id: 'c', callback_port: 33418 } }))).toEqual(
      { client_id: 'c', callback_port: 33418 },
    );
  });

  it('leaves out stdio servers, oauth: false, and servers that send their own Authorization header', () => {
    expect(oauthSettingsOf(server({ command: 'node' }))).toBeUndefined();
    expect(oauthSettingsOf(server({ url: 'https://a.example/mcp', oauth: false }))).toBeUndefined();
    expect(oauthSettingsOf(server({ url: 'https://a.example/mcp', headers: { authorization: 'Bearer x' } }))).toBeUndefined();
  });

  it('rejects an unknown oauth key', () => {
    expect(() => server({ url: 'https://a.example/mcp', oauth: { clientid: 'c' } })).toThrow(/clientid/);
  });
});
