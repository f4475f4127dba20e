// How many principals authorized each per-user server, as `status` asks: counted from every
// record read once (in the Postgres store each row is unsealed on read), on every store backend
// and on the data dir's files; a refused token, a record of another URL, a shared login and
// another server's principals count for nothing.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OAuthRecord } from '../config/index.js';
import type { OAuthCollection } from '../store/index.js';
import { STORE_BACKENDS, useBackendStore, type StoreBackend } from '../../test/helpers/storeBackends.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { fileOAuthRecords, principalOAuthRecords, principalSlot, storeOAuthRecords, type AllOAuthRecords } from './oauthRecords.js';

const GITHUB = 'https://github.test/mcp';
const GITLAB = 'https://gitlab.test/mcp';
const TOKENS = { tokens: { access_token: 'a', token_type: 'Bearer' } };

// Alice and Bob authorized github, Carol's token was refused, Dan's is of another URL; Alice
// authorized gitlab; github's shared login holds tokens too (not a principal's).
async function writeRecords(records: AllOAuthRecords): Promise<void> {
  const write = (server: string, principal: string | undefined, record: OAuthRecord): Promise<unknown> =>
    (principal === undefined ? records : principalOAuthRecords(records, principal)).update(server, record.serverUrl, () => record);
  await write('github', 'alice', { serverUrl: GITHUB, ...TOKENS });
  await write('github', 'bob', { serverUrl: GITHUB, ...TOKENS });
  await write('github', 'carol', { serverUrl: GITHUB, ...TOKENS, needsAuthorizationSince: new Date(0).toISOString() });
  await write('github', 'dan', { serverUrl: 'https://old.github.test/mcp', ...TOKENS });
  await write('github', undefined, { serverUrl: GITHUB, ...TOKENS });
  await write('gitlab', 'alice', { serverUrl: GITLAB, ...TOKENS });
}

const RECORD_URLS = new Map([
  ['github', GITHUB],
  ['gitlab', GITLAB],
  ['jira', 'https://jira.test/mcp'],
]);
const COUNTS = new Map([
  ['github', 2],
  ['gitlab', 1],
  ['jira', 0],
]);

describe.each(STORE_BACKENDS)('storeOAuthRecords.authorizedPrincipals ($name)', (backend: StoreBackend) => {
  const store = useBackendStore(backend);

  it('counts the principals of every per-user server from one read of the records', async () => {
    await writeRecords(storeOAuthRecords(store().oauth));
    const reads: string[] = [];
    const records = store().oauth;
    const counted: OAuthCollection = {
      get: (server) => (reads.push(`get ${server}`), records.get(server)),
      list: () => (reads.push('list'), records.list()),
      put: (server, record, options) => records.put(server, record, options),
      update: (server, change) => records.update(server, change),
      delete: (server) => records.delete(server),
    };
    expect(await storeOAuthRecords(counted).authorizedPrincipals(RECORD_URLS)).toEqual(COUNTS);
    expect(reads).toEqual(['list']);
  });
});

describe('fileOAuthRecords.authorizedPrincipals', () => {
  const tempDir = useTempDir('loadout-oauth-records-');

  it('counts the principals of every per-user server from their files', async () => {
    const records = fileOAuthRecords(path.join(tempDir(), 'oauth'));
    expect(await records.authorizedPrincipals(RECORD_URLS)).toEqual(new Map([...COUNTS].map(([server]) => [server, 0])));
    await writeRecords(records);
    expect(await records.authorizedPrincipals(RECORD_URLS)).toEqual(COUNTS);
    expect(records.where(principalSlot('github', 'alice'))).toMatch(/github@alice\.json$/);
  });
});
