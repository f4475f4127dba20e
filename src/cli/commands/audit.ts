// `loadout audit`: the audit trail read back from the data dir (or, in store mode, the store's
// table), oldest first, filtered by principal, server and time; a table, or the records as JSON.
import type { Command } from 'commander';
import { readAuditTrail, readStoredAuditTrail, type AuditRecord } from '../../audit/index.js';
import { LoadoutError } from '../../shared/index.js';
import { printJson, printLines, printNote, printTable } from '../output.js';
import { commandEnvironment, withCommandStore } from '../program.js';

/** `loadout audit`'s options. */
interface AuditOptions {
  principal?: string;
  server?: string;
  tool?: string;
  replica?: string;
  since?: string;
  json?: boolean;
}

const AGE_UNITS_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Register `audit` on the program. */
export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description('read the audit trail: who called which tool, equipped or changed a toolset, or was refused, and how it ended')
    .option('--principal <subject>', "only this principal's records (its token's subject, or its id)")
    .option('--server <server>', "only calls of this server's tools")
    .option('--tool <name>', 'only calls of this tool: its own name (read_text_file) or the name it was called by (files_read_text_file)')
    .option('--replica <id>', 'only the records of this replica (the id a record names it by)')
    .option('--since <time>', 'only records since then: an ISO 8601 date or time, or an age such as 30m, 12h or 7d')
    .option('--json', 'machine-readable output')
    .action(async (options: AuditOptions, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const sinceMs = options.since === undefined ? undefined : parseSince(options.since, Date.now());
      const { principal, server, tool, replica } = options;
      const filter = { principal, server, tool, replica, sinceMs };
      // LOADOUT_SECRET_KEY seals OAuth tokens only: reading the trail needs no key.
      const { records, unreadableLines } = await withCommandStore(
        storeUrl,
        logger,
        (store) => (store ? readStoredAuditTrail(store.fleet.audit, filter) : readAuditTrail(paths.dataDir, filter)),
        { secretKey: 'unused' },
      );
      if (unreadableLines > 0)
        printNote(`${unreadableLines} line(s) of the trail are not records (a write cut short by a killed process); they are left out`);
      if (options.json) return printJson({ records, unreadableLines });
      if (records.length === 0) return printLines('No audit records match.');
      printTable(
        ['time', 'principal', 'action', 'tool', 'called as', 'outcome', 'ms', 'replica'],
        records.map((record) => [
          record.time,
          record.principal?.subject ?? '-',
          record.action,
          toolOf(record),
          record.exposed_tool ?? '-',
          record.outcome,
          String(Math.round(record.duration_ms)),
          record.replica ?? '-',
        ]),
      );
    });
}

/** `--since`: an age (`30m`, `12h`, `7d`, `90s`) before `nowMs`, or an ISO 8601 date or time. */
export function parseSince(text: string, nowMs: number): number {
  const age = /^(\d+)([smhd])$/.exec(text);
  if (age) return nowMs - Number(age[1]) * AGE_UNITS_MS[age[2]!]!;
  const time = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time))
    throw new LoadoutError(
      'INVALID_ARGUMENT',
      `--since takes an ISO 8601 date or time (2026-05-01, 2026-05-01T09:00Z) or an age (30m, 12h, 7d), got '${text}'`,
    );
  return time;
}

// The tool by its own name (`server.tool` for a server's); a refused name that is no tool has none.
function toolOf(record: AuditRecord): string {
  if (record.action === 'request') return record.method;
  if (record.tool === undefined) return record.server ?? '-';
  return record.server === undefined ? record.tool : `${record.server}.${record.tool}`;
}
