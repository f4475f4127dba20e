// Discovery for the CLI (`init`, `setup`, `refresh`): start the servers it needs, list their tools,
// merge them into servers.yaml (in store mode, into the store), stop them again. Shows progress on
// stderr when it is a terminal.
import type { DiscoveryResult } from '../catalog/index.js';
import { enabledServerNames, type LoadoutPaths, type ToolMergeReport } from '../config/index.js';
import { openRuntime, recordDiscoveryOutcomes } from '../runtime/index.js';
import { LoadoutError, errorMessage, oneLine, type Logger } from '../shared/index.js';
import type { TeamStore } from '../store/index.js';
import { listFailureLines } from './listFailures.js';
import { printLines, printNote, printTable, progressBar } from './output.js';

/** Options of discoverServers. */
interface DiscoverServersOptions {
  acceptChanged?: boolean;
  /** Only the enabled servers the catalog has not discovered yet (`setup`), instead of all of them. */
  undiscoveredOnly?: boolean;
  /** When stderr is not a terminal, a plain line per server there instead of no progress at all. */
  progressLines?: boolean;
  /** In store mode, the team store the definitions go to (servers.yaml is then left as it is); closed with the runtime. */
  store?: TeamStore | undefined;
}

/** Discover `servers` (default: every enabled one) and record them in servers.yaml, or in the store. */
export async function discoverServers(
  paths: LoadoutPaths,
  logger: Logger,
  servers?: string[],
  { undiscoveredOnly, progressLines, store, ...options }: DiscoverServersOptions = {},
): Promise<DiscoveryResult[]> {
  // A failing server is reported in the command's own output; its warn-level log lines would repeat it.
  const quiet = logger.level === 'warn' ? logger.child({}, { level: 'error' }) : logger;
  const runtime = await openRuntime({ paths, logger: quiet, ...(store ? { store } : {}) });
  if (undiscoveredOnly) await runtime.catalog.ensureLoaded();
  const targets = servers ?? (undiscoveredOnly ? runtime.catalog.undiscoveredServers : enabledServerNames(runtime.pool.configs));
  if (!targets.length) {
    await runtime.close();
    return [];
  }
  const progress = progressBar(process.stderr);
  const lines = progressLines && !process.stderr.isTTY;
  const total = targets.length;
  let done = 0;
  try {
    progress.update({ done, total, message: `discovering 0/${total}` });
    const results = await runtime.catalog.discover(targets, {
      ...options,
      onResult: (result) => {
        progress.update({ done: ++done, total, message: `discovering ${done}/${total} ${result.server}` });
        if (lines)
          printNote(
            result.ok
              ? `discovered ${result.server}: ${result.toolCount} tool${result.toolCount === 1 ? '' : 's'} (${result.ms} ms)`
              : `${result.server}: not discovered: ${oneLine(result.failure.text, 200)}`,
          );
      },
    });
    // What failed is kept for `loadout status`, and a running or next `serve` waits before trying it again.
    await recordDiscoveryOutcomes(runtime.discoveryRecords, runtime.pool.configs, results).catch((error: unknown) =>
      logger.warn({ err: errorMessage(error) }, 'could not record the discovery outcomes'),
    );
    return results;
  } finally {
    progress.done();
    await runtime.close();
  }
}

/** Print what discovery did per server (counts in a table, names below); a failed servers.yaml update throws. */
export function printDiscovery(results: readonly DiscoveryResult[]): void {
  const details: string[] = [];
  const rows = results.map((result) => {
    if (!result.ok) return [result.server, 'failed', '-', '-', '-', '-', '-'];
    if (result.mergeError) throw new LoadoutError('CONFIG_INVALID', `tools discovered but servers.yaml not updated: ${result.mergeError}`);
    const merge: ToolMergeReport = result.merge ?? { server: result.server, added: [], stale: [], returned: [], changed: [], accepted: [] };
    // On a first discovery every tool is "added"; naming them all again would be noise.
    if (merge.added.length && merge.added.length < result.toolCount) details.push(`${result.server}: added ${merge.added.join(', ')}`);
    if (merge.stale.length) details.push(`${result.server}: stale (gone from the server) ${merge.stale.join(', ')}`);
    if (merge.returned.length) details.push(`${result.server}: back ${merge.returned.join(', ')}`);
    const pending = merge.changed.filter((name) => !merge.accepted.includes(name));
    if (pending.length) details.push(`${result.server}: changed upstream ${pending.join(', ')} (approve with --accept-changed)`);
    if (merge.accepted.length) details.push(`${result.server}: approved ${merge.accepted.join(', ')}`);
    details.push(...listFailureLines(result.server, result.listFailures));
    return [
      result.server,
      'ok',
      String(result.toolCount),
      String(merge.added.length),
      String(merge.stale.length),
      String(merge.returned.length),
      String(merge.changed.length),
    ];
  });
  printTable(['server', 'result', 'tools', 'added', 'stale', 'returned', 'changed'], rows);
  if (details.length) printLines(...details);
}

/** Results as `--json` gives them: a failure as `error` (its text) and `code`. */
export function discoveryJson(results: readonly DiscoveryResult[]): unknown[] {
  return results.map((result) => {
    if (result.ok) return result;
    const { failure, ...rest } = result;
    return { ...rest, error: failure.text, code: failure.code };
  });
}

/** A one-line error unless every server was discovered. */
export function failureOf(results: readonly DiscoveryResult[]): LoadoutError | undefined {
  const failed = results.filter((result): result is Extract<DiscoveryResult, { ok: false }> => !result.ok);
  if (!failed.length) return undefined;
  // Each reason whole, from a line of its own: it may go on for lines (a servers.yaml entry to paste, the server's stderr).
  const detail = failed.map((result) => `${result.server}: ${result.failure.text}`).join('\n');
  return new LoadoutError(
    'SERVER_START_FAILED',
    `${failed.length} of ${results.length} server${results.length === 1 ? '' : 's'} could not be discovered (${failed.map((result) => result.server).join(', ')}):\n${detail}`,
  );
}

/** Print a discovery that is one step of a bigger command (`init`, `setup`): a failed server is a note, not the command's failure. */
export function printDiscoveryStep(results: readonly DiscoveryResult[]): void {
  if (!results.length) return;
  printDiscovery(results);
  const failure = failureOf(results);
  // On a line of its own: the failure may end with a server's stderr lines.
  if (failure) printNote(`${failure.message}\nFix servers.yaml (or what the server needs) and run "loadout refresh".`);
}
