// Where downstream OAuth records live: `<data dir>/oauth/<server>.json` files in single-user mode,
// the team store's encrypted `oauth` collection in store mode. One seam, so a login, a connection
// and catalog discovery read and write the same place. A principal's own authorization of a
// `credentials: per-user` server is a record of the same kind beside them (principalOAuthRecords).
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { deleteOAuthRecord, oauthRecordFile, readOAuthRecord, updateOAuthRecord, type OAuthRecord } from '../config/index.js';
import { LoadoutError } from '../shared/index.js';
import type { OAuthCollection } from '../store/index.js';

/** The OAuth records of the downstream servers, by server name. */
export interface OAuthRecords {
  /** The server's record; undefined when there is none or it cannot be read (a new login rewrites it). */
  read(server: string): Promise<OAuthRecord | undefined>;
  /** Read-modify-write of the server's record for `serverUrl` (a record of another URL reads as none). */
  update(server: string, serverUrl: string, change: (record: OAuthRecord) => OAuthRecord): Promise<OAuthRecord>;
  /** Forget the server's record; true if there was one. */
  delete(server: string): Promise<boolean>;
  /** Where the server's record is kept, for messages. */
  where(server: string): string;
}

/** All the records of a data dir or a team store: the shared ones and the principals' beside them. */
export interface AllOAuthRecords extends OAuthRecords {
  /**
   * How many principals hold tokens of their own for each server at its record URL (`recordUrls`:
   * server → URL; `credentials: per-user`; a record of another URL is no authorization of this
   * one), by server: counts, never the tokens. Every record is read once, however many servers.
   */
  authorizedPrincipals(recordUrls: ReadonlyMap<string, string>): Promise<Map<string, number>>;
}

/** Records as files in `oauthDir` (mode 0600): single-user mode. */
export function fileOAuthRecords(oauthDir: string): AllOAuthRecords {
  return {
    read: (server) => readOAuthRecord(oauthRecordFile(oauthDir, server)),
    update: (server, serverUrl, change) => updateOAuthRecord(oauthRecordFile(oauthDir, server), serverUrl, change),
    delete: (server) => deleteOAuthRecord(oauthRecordFile(oauthDir, server)),
    where: (server) => oauthRecordFile(oauthDir, server),
    async authorizedPrincipals(recordUrls) {
      const files = await readdir(oauthDir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [];
        throw error;
      });
      const slots = files.filter((file) => file.endsWith('.json')).map((file) => file.slice(0, -'.json'.length));
      const ofServers = slots.filter((slot) => serverOfSlot(slot, recordUrls) !== undefined);
      const records = await Promise.all(ofServers.map((slot) => readOAuthRecord(path.join(oauthDir, `${slot}.json`))));
      return countAuthorized(
        ofServers.map((key, index) => ({ key, record: records[index] })),
        recordUrls,
      );
    },
  };
}

/**
 * Records in the team store, encrypted: store mode. A record the key cannot open (a wrong
 * LOADOUT_SECRET_KEY) fails reads and writes as "needs authorization", and is never overwritten.
 */
export function storeOAuthRecords(collection: OAuthCollection): AllOAuthRecords {
  return {
    async read(server) {
      const read = await collection.get(server);
      if (read?.state === 'unreadable') throw unreadableError(server, read.reason);
      return read?.value;
    },
    async update(server, serverUrl, change) {
      try {
        const read = await collection.update(server, (current) => change(current?.serverUrl === serverUrl ? current : { serverUrl }));
        if (read?.state !== 'readable') throw new LoadoutError('NEEDS_AUTHORIZATION', `Server '${server}' has no readable OAuth record`);
        return read.value;
      } catch (error) {
        if (!(error instanceof LoadoutError && error.code === 'STORE_SECRET_KEY')) throw error;
        throw unreadableError(server, error.message);
      }
    },
    delete: (server) => collection.delete(server),
    where: (server) => `the team store (oauth '${server}')`,
    async authorizedPrincipals(recordUrls) {
      const reads = await collection.list();
      // A record this key cannot open is no authorization anyone can use.
      return countAuthorized(
        reads.map((read) => ({ key: read.key, record: read.state === 'readable' ? read.value : undefined })),
        recordUrls,
      );
    },
  };
}

/**
 * The records of one principal's own authorizations (servers with `credentials: per-user`), in
 * the same place and under the same key as the shared ones: `<server>@<principal id>`. Server
 * names have no `@`, so no principal's record is a shared one or another principal's, and the
 * team store binds each sealed record to its key, so a record moved into another slot is unreadable.
 */
export function principalOAuthRecords(records: OAuthRecords, principal: string): OAuthRecords {
  return {
    read: (server) => records.read(principalSlot(server, principal)),
    update: (server, serverUrl, change) => records.update(principalSlot(server, principal), serverUrl, change),
    delete: (server) => records.delete(principalSlot(server, principal)),
    where: (server) => records.where(principalSlot(server, principal)),
  };
}

/**
 * The one key of `principal`'s own use of `server`: their OAuth record, their connection and their
 * authorization flow (`<server>@<principal id>`; with an empty principal, the prefix of them all).
 */
export function principalSlot(server: string, principal: string): string {
  return `${server}@${principal}`;
}

function unreadableError(server: string, reason: string): LoadoutError {
  return new LoadoutError(
    'NEEDS_AUTHORIZATION',
    `Server '${server}' needs authorization: its stored OAuth token is unreadable (${reason})`,
  );
}

// The server of `recordUrls` whose principal's slot (principalSlot, read back) `key` is; undefined for any other record.
function serverOfSlot(key: string, recordUrls: ReadonlyMap<string, string>): string | undefined {
  const at = key.indexOf('@');
  const server = at < 0 ? undefined : key.slice(0, at);
  return server !== undefined && recordUrls.has(server) ? server : undefined;
}

// How many of `records` (by slot key) authorize each server of `recordUrls`.
function countAuthorized(
  records: ReadonlyArray<{ key: string; record: OAuthRecord | undefined }>,
  recordUrls: ReadonlyMap<string, string>,
): Map<string, number> {
  const counts = new Map([...recordUrls.keys()].map((server) => [server, 0]));
  for (const { key, record } of records) {
    const server = serverOfSlot(key, recordUrls);
    if (server !== undefined && authorizes(record, recordUrls.get(server)!)) counts.set(server, counts.get(server)! + 1);
  }
  return counts;
}

/** Whether `record` authorizes the server at `recordUrl` now: tokens the server has not refused. */
export function authorizes(record: OAuthRecord | undefined, recordUrl: string): boolean {
  return record?.serverUrl === recordUrl && holdsUsableTokens(record);
}

/** Whether `record` holds tokens the server has not refused (at whatever URL it was made for). */
export function holdsUsableTokens(record: OAuthRecord | undefined): boolean {
  return record?.tokens !== undefined && record.needsAuthorizationSince === undefined;
}
