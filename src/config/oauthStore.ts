// The OAuth file of one HTTP server, `<data dir>/oauth/<server>.json`: its client registration,
// tokens, the PKCE verifier of a login in progress, cached discovery, and whether it needs a
// login. Written with mode 0600 (in a 0700 dir), never into servers.yaml. What the
// authorization server sent is kept loosely, as it came: the SDK reads it back.
import { chmod, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { errorMessage, firstIssueText } from '../shared/index.js';
import { readTextIfExists, withFileLock, writeTextAtomic } from './safeWrite.js';

const Sent = z.looseObject({});

/** The OAuth state loadout keeps for one server. */
export const OAuthRecordSchema = z.looseObject({
  /**
   * The server URL the record belongs to, with its `${VAR}`s unexpanded (see OAuthTarget.recordUrl):
   * a record for another URL is not used.
   */
  serverUrl: z.string(),
  /** The redirect URL the client was registered with (loopback, fixed port). */
  redirectUrl: z.string().optional(),
  clientInformation: Sent.optional(),
  tokens: Sent.optional(),
  /** When the tokens were saved (ISO time), so `expires_in` can be read as an instant. */
  tokensSavedAt: z.string().optional(),
  codeVerifier: z.string().optional(),
  discoveryState: Sent.optional(),
  /** Set when the server refused loadout and only a new login can fix it (ISO time). */
  needsAuthorizationSince: z.string().optional(),
});
export type OAuthRecord = z.infer<typeof OAuthRecordSchema>;

/** The OAuth file of `server` in `oauthDir`. */
export function oauthRecordFile(oauthDir: string, server: string): string {
  return path.join(oauthDir, `${server}.json`);
}

/** An OAuth file as read: its record, or why it is unreadable. */
export type OAuthFileRead = { state: 'readable'; value: OAuthRecord } | { state: 'unreadable'; reason: string };

/** The record in `file` or why it cannot be read; undefined when there is no file. */
export async function readOAuthFile(file: string): Promise<OAuthFileRead | undefined> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { state: 'unreadable', reason: `${file} is not valid JSON (${errorMessage(error)})` };
  }
  const parsed = OAuthRecordSchema.safeParse(json);
  return parsed.success
    ? { state: 'readable', value: parsed.data }
    : { state: 'unreadable', reason: `${file} is not an OAuth record: ${firstIssueText(parsed.error)}` };
}

/** The record in `file`, or undefined when there is none (or it is unreadable: a new login rewrites it). */
export async function readOAuthRecord(file: string): Promise<OAuthRecord | undefined> {
  const read = await readOAuthFile(file);
  return read?.state === 'readable' ? read.value : undefined;
}

/** Write `record` to `file` (mode 0600, in a 0700 dir); the caller holds the file's lock. */
export async function writeOAuthFile(file: string, record: OAuthRecord): Promise<void> {
  await privateDir(path.dirname(file));
  await writeTextAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Locked read-modify-write of the record for `serverUrl`: a record of another URL reads as none.
 * `change` returns the new record; it is written with mode 0600.
 */
export async function updateOAuthRecord(
  file: string,
  serverUrl: string,
  change: (record: OAuthRecord) => OAuthRecord,
): Promise<OAuthRecord> {
  await privateDir(path.dirname(file));
  return withFileLock(file, async () => {
    const current = await readOAuthRecord(file);
    const next = change(current?.serverUrl === serverUrl ? current : { serverUrl });
    await writeOAuthFile(file, next);
    return next;
  });
}

/** Forget everything about a server's OAuth (tokens and registration). True if there was a file. */
export async function deleteOAuthRecord(file: string): Promise<boolean> {
  const existed = (await readTextIfExists(file)) !== undefined;
  await rm(file, { force: true });
  return existed;
}

async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode does not apply to a directory that already exists.
  await chmod(dir, 0o700);
}
