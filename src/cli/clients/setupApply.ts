// Carrying out a setup plan, and undoing it. Order matters for safety: servers.yaml gains the
// servers first (so a failure later leaves them in both places, never in neither), then the client
// files are backed up, then each is replaced only if nobody changed it since it was read.
import spawn from 'cross-spawn';
import {
  addSecrets,
  createServersFile,
  importedServersYaml,
  proposeSandbox,
  readTextIfExists,
  updateServersFile,
  type LoadoutPaths,
} from '../../config/index.js';
import { LoadoutError, yamlModule } from '../../shared/index.js';
import { backupTexts, createBackup, latestBackup, retireBackup, textHash, type Backup } from './backups.js';
import type { ClientDefinition } from './clientFiles.js';
import { writeIfUnchanged } from './jsonFile.js';
import type { SetupPlan } from './setupPlan.js';

/** What an applied setup wrote. */
export interface SetupOutcome {
  backup?: Backup;
  serversAdded: string[];
}

/** Write secrets.env and servers.yaml, back up and edit the client's files, and run `claude mcp add` if planned. */
export async function applySetup(client: ClientDefinition, plan: SetupPlan, paths: LoadoutPaths): Promise<SetupOutcome> {
  // Refuse before touching servers.yaml if a client file already changed since it was read.
  for (const change of plan.changes) await ensureUnchanged(change.file, change.before);
  // The secrets first: servers.yaml never refers to a variable secrets.env does not hold yet.
  await addSecrets(paths.secretsFile, plan.secrets.values);
  const serversAdded = await addToServersFile(paths, plan, `loadout setup ${client.name}`);
  const backedUp = plan.read.filter(
    (json) =>
      plan.changes.some((change) => change.file === json.file) ||
      (plan.addLoadout.kind === 'claude-cli' && json.file === plan.addLoadout.file),
  );
  const backup = backedUp.length
    ? await createBackup(
        paths.dataDir,
        client.name,
        backedUp.map(({ file, text }) => ({ file, text, after: plan.changes.find((change) => change.file === file)?.after })),
      )
    : undefined;
  for (const change of plan.changes) await writeIfUnchanged(change.file, change.before, change.after);
  if (plan.addLoadout.kind === 'claude-cli') await runClaude(plan.addLoadout.command, plan.addLoadout.args);
  return { backup, serversAdded };
}

/** The changes `--undo` would make: each file of the newest backup back to its saved text. */
export async function planUndo(
  paths: LoadoutPaths,
  client: ClientDefinition,
): Promise<{
  backup: Backup;
  changes: Array<{ file: string; before: string | undefined; after: string | undefined; changedSinceSetup: boolean }>;
}> {
  const backup = await latestBackup(paths.dataDir, client.name);
  const saved = await backupTexts(backup);
  const changes = await Promise.all(
    saved.map(async ({ file, text, written }) => {
      const before = await readTextIfExists(file);
      // Edited after setup (by the client, or by hand): restoring the backup undoes that too.
      return { file, before, after: text, changedSinceSetup: written !== null && (before === undefined || textHash(before) !== written) };
    }),
  );
  return { backup, changes: changes.filter((change) => change.before !== change.after) };
}

/** Restore the files of an undo plan (each only if unchanged since shown), then retire the backup. */
export async function applyUndo(paths: LoadoutPaths, undo: Awaited<ReturnType<typeof planUndo>>): Promise<void> {
  const { rm } = await import('node:fs/promises');
  for (const change of undo.changes) {
    if (change.after !== undefined) await writeIfUnchanged(change.file, change.before, change.after);
    else {
      await ensureUnchanged(change.file, change.before);
      await rm(change.file, { force: true });
    }
  }
  await retireBackup(paths.dataDir, undo.backup);
}

async function ensureUnchanged(file: string, expected: string | undefined): Promise<void> {
  if ((await readTextIfExists(file)) !== expected) {
    throw new LoadoutError(
      'CONFIG_CHANGED',
      `${file} changed while loadout was preparing its edit (another program wrote it); nothing was written. Run the command again`,
    );
  }
}

async function addToServersFile(paths: LoadoutPaths, plan: SetupPlan, command: string): Promise<string[]> {
  const names = Object.keys(plan.imports.servers);
  if (!names.length) return [];
  if ((await readTextIfExists(paths.serversFile)) === undefined) {
    try {
      // Two scopes of one client share a file (~/.claude.json): name it once in the header.
      const found = plan.imports.found.filter(
        (entry, index, all) =>
          entry.servers.length && all.findIndex((other) => other.source.file === entry.source.file && other.servers.length) === index,
      );
      await createServersFile(paths.serversFile, importedServersYaml({ ...plan.imports, found }, command));
      return names;
    } catch (error) {
      // Created meanwhile (a gateway's first run): add to it below instead.
      if (!(error instanceof LoadoutError && error.code === 'CONFIG_EXISTS')) throw error;
    }
  }
  const added: string[] = [];
  await updateServersFile(paths.serversFile, (document) => {
    const yaml = yamlModule();
    if (!yaml.isMap(document.get('servers'))) document.set('servers', document.createNode({}));
    for (const name of names) {
      if (document.hasIn(['servers', name])) continue;
      document.setIn(['servers', name], document.createNode(plan.imports.servers[name]));
      proposeSandbox(document, name);
      added.push(name);
    }
  });
  return added;
}

function runClaude(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => reject(new LoadoutError('CALL_FAILED', `could not run "claude ${args.join(' ')}": ${error.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new LoadoutError(
            'CALL_FAILED',
            `"claude ${args.join(' ')}" failed (exit ${code}): ${output.trim().split('\n')[0] ?? ''}; the client files are backed up, "loadout setup claude-code --undo" restores them`,
          ),
        );
    });
  });
}
