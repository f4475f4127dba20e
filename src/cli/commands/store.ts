// `loadout store migrate|status|import|export`: the team store's schema and moving a single
// user's files into it and back out. The store is named by --store (an option of every command)
// or LOADOUT_STORE_URL; OAuth tokens need LOADOUT_SECRET_KEY.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { openFileStore, type FleetStore, type SchemaState } from '../../store/index.js';
import { printJson, printLines, printTable } from '../output.js';
import { commandPaths, requiredStore, withCommandStore, type StoreOpening } from '../program.js';
import { TRANSFER_KINDS, copyStore, filesNotStored, type TransferReport } from '../storeTransfer.js';

interface StoreOptions {
  json?: boolean;
}

/** Register `store` and its subcommands on the program. */
export function registerStore(program: Command): void {
  const store = program
    .command('store')
    .description('the team store (PostgreSQL): schema migrations, status, import and export of a data dir');
  const withJson = (command: Command) => command.option('--json', 'machine-readable output');

  withJson(
    store.command('migrate').description('apply the schema migrations this loadout ships (replicas also apply them at start)'),
  ).action((options: StoreOptions, command: Command) => {
    const started = performance.now();
    return withStore(command, { migrate: true }, async (opened) => {
      const schema = await opened.fleet.schema();
      const ms = Math.round(performance.now() - started);
      if (options.json) printJson({ store: opened.description, version: schema.version, ms });
      else printLines(`${opened.description}: schema at version ${schema.version} (${ms} ms).`);
    });
  });

  withJson(store.command('status').description("show the store's schema version, pending migrations and records per kind")).action(
    (options: StoreOptions, command: Command) =>
      withStore(command, { migrate: false }, async (opened) => {
        const schema = await opened.fleet.schema();
        const counts = schema.pending.length ? undefined : await opened.counts();
        if (options.json) printJson({ store: opened.description, ...schema, counts: counts ?? null });
        else printStatus(opened.description, schema, counts);
      }),
  );

  withJson(
    store
      .command('import')
      .description("move a single user's data dir (and the --config dir's saved toolsets) into the store")
      .argument('<data-dir>', 'the data dir to read (it is left as it is)'),
  ).action((dataDir: string, options: StoreOptions, command: Command) => {
    // Only read: the data dir is neither claimed nor written (not even a revision ledger).
    const source = path.resolve(dataDir);
    const { toolsetsDir } = commandPaths(command);
    return withStore(command, { migrate: true }, async (opened) => {
      const files = await openFileStore({ dataDir: source, toolsetsDir, listen: false, readOnly: true });
      const report = await copyStore(files, opened, (server) => path.join(source, 'oauth', `${server}.json`)).finally(() => files.close());
      report.skipped.push(...(await filesNotStored(source)));
      printReport(`Imported into ${opened.description}`, report, options.json);
    });
  });

  withJson(
    store
      .command('export')
      .description("write the store's records out as a data dir in today's file formats (saved toolsets in DIR/toolsets/)")
      .argument('<dir>', 'the folder to write (created when missing)'),
  ).action((dir: string, options: StoreOptions, command: Command) =>
    withStore(command, { migrate: false }, async (opened) => {
      const target = path.resolve(dir);
      // The files store's revision ledger is its own bookkeeping, not part of the data dir written.
      const files = await openFileStore({
        dataDir: target,
        toolsetsDir: path.join(target, 'toolsets'),
        listen: false,
        revisionsInMemory: true,
      });
      const report = await copyStore(opened, files, (server) => path.join(target, 'oauth', `${server}.json`)).finally(() => files.close());
      await mkdir(target, { recursive: true });
      printReport(`Exported from ${opened.description} to ${target}`, report, options.json);
    }),
  );
}

/** Open the store the root options name (it must name one), run `work`, and close it whatever happens. */
function withStore(command: Command, how: Pick<StoreOpening, 'migrate'>, work: (store: FleetStore) => Promise<void>): Promise<void> {
  const { storeUrl, logger } = requiredStore(command);
  // The schema and the plain kinds need no key: only OAuth tokens do, and the transfer reports those it cannot open.
  return withCommandStore(storeUrl, logger, work, { ...how, secretKey: 'optional' });
}

function printStatus(store: string, schema: SchemaState, counts: Record<string, number> | undefined): void {
  const state =
    schema.version === 0
      ? `empty (run "loadout store migrate")`
      : schema.pending.length
        ? `at version ${schema.version}; pending: ${schema.pending.join(', ')} (run "loadout store migrate")`
        : `at version ${schema.version}, up to date`;
  printLines(`${store}: schema ${state}.`);
  if (counts)
    printTable(
      ['kind', 'records'],
      TRANSFER_KINDS.map((kind) => [kind, String(counts[kind] ?? 0)]),
    );
}

function printReport(title: string, report: TransferReport, json: boolean | undefined): void {
  if (json) {
    printJson(report);
    return;
  }
  const moved = TRANSFER_KINDS.filter((kind) => report.counts[kind]).map((kind) => `${kind} ${report.counts[kind]}`);
  printLines(
    `${title}: ${moved.length ? moved.join(', ') : 'nothing'}.`,
    ...report.skipped.map(({ file, reason }) => `  skipped ${file}: ${reason}`),
  );
}
