// Backups `loadout setup` takes before it changes a client's files, and `--undo` restores: one
// folder per run under <data dir>/backups/<client>/<timestamp>/ with a copy of each file and a
// manifest saying where each belongs (and whether it existed at all).
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { readTextIfExists } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import type { ClientName } from './clientFiles.js';

const BackupManifestSchema = z.strictObject({
  client: z.string(),
  createdAt: z.string(),
  files: z.array(
    z.strictObject({
      file: z.string(),
      copy: z.string().nullable(),
      /** sha256 of the text setup wrote (null: written by another program, e.g. `claude mcp add`). */
      written: z.string().nullable(),
    }),
  ),
});
/** What one backup holds: each original file, its copy (null: the file did not exist), and what setup wrote. */
export type BackupManifest = z.infer<typeof BackupManifestSchema>;

/** A backup on disk: its folder and manifest. */
export interface Backup {
  dir: string;
  manifest: BackupManifest;
}

/** Copy each file's current text (given, as read) into a new timestamped backup folder. */
export async function createBackup(
  dataDir: string,
  client: ClientName,
  files: ReadonlyArray<{ file: string; text: string | undefined; after: string | undefined }>,
  now = new Date(),
): Promise<Backup> {
  // Timestamps sort as text; the counter keeps two runs in the same millisecond apart.
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  let dir = path.join(dataDir, 'backups', client, stamp);
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(dir, { recursive: false });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') await mkdir(path.dirname(dir), { recursive: true });
      else if ((error as NodeJS.ErrnoException).code === 'EEXIST') dir = path.join(dataDir, 'backups', client, `${stamp}-${attempt}`);
      else throw error;
    }
  }
  const manifest: BackupManifest = { client, createdAt: now.toISOString(), files: [] };
  for (const [index, { file, text, after }] of files.entries()) {
    const copy = text === undefined ? null : `${index}-${path.basename(file)}`;
    if (copy) await writeFile(path.join(dir, copy), text!, { encoding: 'utf8', mode: 0o600 });
    manifest.files.push({ file, copy, written: after === undefined ? null : textHash(after) });
  }
  await writeFile(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir, manifest };
}

/** The hash a manifest keeps of a text. */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The newest backup of `client`, or CONFIG_NOT_FOUND. */
export async function latestBackup(dataDir: string, client: ClientName): Promise<Backup> {
  const root = path.join(dataDir, 'backups', client);
  const names = (await readdir(root).catch(() => [] as string[])).sort();
  const name = names.at(-1);
  if (!name)
    throw new LoadoutError(
      'CONFIG_NOT_FOUND',
      `no backup of ${client} in ${root}; "loadout setup ${client}" makes one when it changes a file`,
    );
  const dir = path.join(root, name);
  const parsed = BackupManifestSchema.safeParse(JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')));
  if (!parsed.success) throw new LoadoutError('CONFIG_INVALID', `${path.join(dir, 'manifest.json')} is not a loadout backup manifest`);
  return { dir, manifest: parsed.data };
}

/** The text each file of a backup held (undefined: the file did not exist then), and the hash of what setup wrote. */
export async function backupTexts(backup: Backup): Promise<Array<{ file: string; text: string | undefined; written: string | null }>> {
  return Promise.all(
    backup.manifest.files.map(async ({ file, copy, written }) => ({
      file,
      written,
      text: copy === null ? undefined : await readTextIfExists(path.join(backup.dir, copy)),
    })),
  );
}

/** Move a restored backup aside (kept, under backups/restored/), so the next --undo takes the one before it. */
export async function retireBackup(dataDir: string, backup: Backup): Promise<void> {
  const restored = path.join(dataDir, 'backups', 'restored');
  await mkdir(restored, { recursive: true });
  await rename(backup.dir, path.join(restored, `${backup.manifest.client}-${path.basename(backup.dir)}`));
}
