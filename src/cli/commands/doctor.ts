// `loadout doctor [--json]`: check the config dir, data dir, the team store (in store mode),
// servers.yaml and each server, and print one line per finding with its fix. Exit 0 when all is
// well, 1 when not.
import os from 'node:os';
import type { Command } from 'commander';
import { currentClientEnvironment } from '../clients/clientFiles.js';
import { runDoctor } from '../doctorChecks.js';
import { checkStore } from '../doctorStore.js';
import { paint, printJson, printLines } from '../output.js';
import { commandEnvironment } from '../program.js';

/** Register `doctor` on the program. */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the config and data dirs, the team store (with --store), and every server (starts? tools? authorization? ${VAR}s set? also listed in a client?)',
    )
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const store = storeUrl ? await checkStore(storeUrl, process.env.LOADOUT_SECRET_KEY || undefined, logger) : undefined;
      const findings = await runDoctor(paths, currentClientEnvironment(os.homedir()), logger, store ? { store } : {});
      const ok = findings.every((finding) => finding.ok);
      if (options.json) printJson({ ok, findings });
      else {
        printLines(
          // A message's further lines (a server's stderr) go below its finding, indented.
          ...findings.flatMap((finding) => {
            const [first, ...more] = finding.message.split('\n');
            return [
              `${finding.ok ? paint('green', 'ok     ') : paint('red', 'problem')} ${finding.subject}: ${first}${finding.fix ? ` — fix: ${finding.fix}` : ''}`,
              ...more.map((line) => `        ${line}`),
            ];
          }),
          ok ? 'All is well.' : `${findings.filter((finding) => !finding.ok).length} problem(s) found.`,
        );
      }
      // Not process.exit: let stdout drain; main.ts owns exiting.
      if (!ok) process.exitCode = 1;
    });
}
