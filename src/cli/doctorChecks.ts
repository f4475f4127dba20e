// The checks behind `loadout doctor`: the config and data dirs, servers.yaml, and each server —
// its ${VAR}s set, does it start, how many tools, does it want authorization, is it also listed
// directly in an MCP client; in store mode, the store too (doctorStore.ts). Each check gives
// findings; it prints nothing, and the only state it changes is the discovery records (each
// start's outcome, as serve and refresh record theirs): discovery.json, or the store's.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import {
  convertServer,
  expansionEnv,
  loadServersConfig,
  loadServersFile,
  invalidEntryProblem,
  sandboxOf,
  sandboxText,
  serversFileNotice,
  startsLoadout,
  unsetVariablesProblem,
  type LoadoutPaths,
  type ServerConfig,
} from '../config/index.js';
import { SpawnFailure, refusesAccess, sandboxProblem } from '../downstream/index.js';
import { openRuntime, recordDiscoveryOutcomes, type DiscoveryOutcome } from '../runtime/index.js';
import { errorMessage, failureOf, isLoadoutError, oneLine, type Logger } from '../shared/index.js';
import { CLIENT_NAMES, clientDefinition, type ClientEnvironment } from './clients/clientFiles.js';
import { readClientFile, valueAt } from './clients/jsonFile.js';
import { findSameServer } from './clients/setupPlan.js';
import { checkServerFix, listFailureWords } from './listFailures.js';
import type { TeamStore } from '../store/index.js';

/**
 * What a finding checked: a dir, servers.yaml, a server's ${VAR}s, its start, its lists (tools,
 * prompts, resources, templates), its authorization, a client's file, a duplicate.
 */
type Check =
  'config-dir' | 'data-dir' | 'store' | 'servers.yaml' | 'sandbox' | 'env' | 'start' | 'lists' | 'auth' | 'client-file' | 'duplicate';

/** One line of the doctor's report: what was looked at, whether it is well, and the fix if not. */
export interface Finding {
  check: Check;
  /** The server the finding is about, if any. */
  server?: string;
  /** How the human line names it, e.g. "server echo". */
  subject: string;
  ok: boolean;
  message: string;
  /** Tools listed and time taken, for a server that started. */
  tools?: number;
  ms?: number;
  fix?: string;
}

/** In store mode, the store's own findings, and the store when the server checks can record their outcomes in it. */
export interface StoreCheck {
  findings: Finding[];
  usable: TeamStore | undefined;
}

/**
 * Run every check; servers are started (a few at a time) and stopped again. In store mode
 * (`store`), their outcomes go to the store, and with the store unusable they are not started.
 * Closes the store.
 */
export async function runDoctor(
  paths: LoadoutPaths,
  clientEnv: ClientEnvironment,
  logger: Logger,
  { env = process.env, store }: { env?: NodeJS.ProcessEnv; store?: StoreCheck } = {},
): Promise<Finding[]> {
  try {
    return await runChecks(paths, clientEnv, logger, env, store);
  } finally {
    await store?.usable?.close();
  }
}

async function runChecks(
  paths: LoadoutPaths,
  clientEnv: ClientEnvironment,
  logger: Logger,
  env: NodeJS.ProcessEnv,
  store: StoreCheck | undefined,
): Promise<Finding[]> {
  const findings = [await checkDir('config-dir', paths.configDir), await checkDir('data-dir', paths.dataDir), ...(store?.findings ?? [])];
  let servers: Record<string, ServerConfig>;
  try {
    const loaded = await loadServersFile(paths.serversFile, { skipBrokenServers: true });
    if (!loaded.exists) {
      findings.push({
        check: 'servers.yaml',
        subject: 'servers.yaml',
        ok: false,
        message: `${paths.serversFile} does not exist`,
        fix: 'run "loadout setup <client>" or "loadout init" to import your servers',
      });
      return findings;
    }
    servers = loaded.config.servers;
    findings.push({
      check: 'servers.yaml',
      subject: 'servers.yaml',
      ok: true,
      message: `${paths.serversFile}: ${Object.keys(servers).length} server${Object.keys(servers).length === 1 ? '' : 's'}`,
    });
    // An invalid entry is left out of every gateway; the other servers are still checked.
    for (const [server, problem] of loaded.brokenServers) {
      const { problem: message, fix } = invalidEntryProblem(problem);
      findings.push({ check: 'servers.yaml', server, subject: `server ${server}`, ok: false, message, fix });
    }
  } catch (error) {
    findings.push({
      check: 'servers.yaml',
      subject: 'servers.yaml',
      ok: false,
      message: await unparsedNotice(paths, error),
      fix: `correct ${paths.serversFile}`,
    });
    return findings;
  }
  const sandboxFinding = await checkSandbox(paths, servers);
  if (sandboxFinding) findings.push(sandboxFinding);
  // The ${VAR}s a server starts with may come from secrets.env as well as the environment.
  if (store && !store.usable)
    findings.push({
      check: 'start',
      subject: 'servers',
      ok: false,
      message: 'not started: their outcomes are recorded in the store, which is not usable (above)',
      fix: 'fix the store, then run "loadout doctor" again',
    });
  else findings.push(...(await checkServers(paths, logger, env, expansionEnv(paths.secretsFile, env), store?.usable)));
  findings.push(...(await checkClients(servers, clientEnv)));
  return findings;
}

// A file that does not parse: what `serve` runs on meanwhile (its last good parse, or no servers), with file:line:col.
async function unparsedNotice(paths: LoadoutPaths, error: unknown): Promise<string> {
  if (!isLoadoutError(error) || error.code !== 'CONFIG_INVALID') return errorMessage(error);
  const { fileProblem } = await loadServersConfig(paths.serversFile, paths.parsedServersFile, { lastGoodOnError: true }).catch(() => ({
    fileProblem: undefined,
  }));
  return fileProblem ? serversFileNotice(fileProblem) : errorMessage(error);
}

// Whether the sandbox works, when a server is to run in one: a trial process in it, as a server would be.
async function checkSandbox(paths: LoadoutPaths, servers: Record<string, ServerConfig>): Promise<Finding | undefined> {
  const sandboxed = Object.entries(servers).filter(([, config]) => config.enabled && sandboxOf(config));
  if (sandboxed.length === 0) return undefined;
  const problem = await sandboxProblem([paths.configDir, paths.dataDir]);
  const names = sandboxed.map(([name]) => name).join(', ');
  if (problem === undefined) return { check: 'sandbox', subject: 'sandbox', ok: true, message: `works; ${names} run in it` };
  return {
    check: 'sandbox',
    subject: 'sandbox',
    ok: false,
    message: `${problem}; ${names} will not start (a sandboxed server is never started without its sandbox)`,
    fix: 'install what it names, or set sandbox: false on the servers you trust to run without one',
  };
}

async function checkDir(check: 'config-dir' | 'data-dir', dir: string): Promise<Finding> {
  const finding = (rest: Omit<Finding, 'check' | 'subject'>): Finding => ({ check, subject: check.replace('-', ' '), ...rest });
  try {
    if (!(await stat(dir)).isDirectory())
      return finding({ ok: false, message: `${dir} is not a directory`, fix: `move it away; loadout needs ${dir} as a directory` });
    await access(dir, constants.W_OK);
    return finding({ ok: true, message: dir });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      return finding({ ok: false, message: `${dir} is not writable`, fix: `give your user write access to ${dir}` });
    if (code !== 'ENOENT') return finding({ ok: false, message: `${dir}: ${errorMessage(error)}`, fix: 'check the path' });
    // Missing is fine when loadout can create it: the nearest existing parent must be writable.
    let parent = path.dirname(dir);
    while (parent !== path.dirname(parent) && !(await exists(parent))) parent = path.dirname(parent);
    const writable = await access(parent, constants.W_OK).then(
      () => true,
      () => false,
    );
    return writable
      ? finding({ ok: true, message: `${dir} (created on first use)` })
      : finding({
          ok: false,
          message: `${dir} does not exist and ${parent} is not writable`,
          fix: `create ${dir}, or pass --${check.split('-')[0]} DIR`,
        });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

// The SpawnFailure somewhere in an error's causes, if the server's program could not be started.
function spawnFailureOf(error: unknown): SpawnFailure | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause instanceof SpawnFailure) return cause;
  return undefined;
}

// Started through the runtime `serve` uses, so a server is checked as it would run there (OAuth tokens included).
async function checkServers(
  paths: LoadoutPaths,
  logger: Logger,
  env: NodeJS.ProcessEnv,
  expansion: NodeJS.ProcessEnv,
  store: TeamStore | undefined,
): Promise<Finding[]> {
  // A failing server is this command's own finding; its warn-level log lines would repeat it.
  const quiet = logger.level === 'warn' ? logger.child({}, { level: 'silent' }) : logger;
  const { pool, ...runtime } = await openRuntime({ paths, logger: quiet, env, ...(store ? { store } : {}) });
  const limit = pLimit(4);
  // Optional lists (prompts, resources, templates) a server failed to answer, reported after its own finding.
  const listFindings = new Map<string, Finding[]>();
  // Each start tried, recorded as serve and refresh record theirs, so `status` gives the reason after.
  const outcomes: DiscoveryOutcome[] = [];
  try {
    const findings = await Promise.all(
      Object.entries(pool.configs).map(([name, config]) =>
        limit(async (): Promise<Finding> => {
          const subject = `server ${name}`;
          const about = { server: name, subject };
          if (!config.enabled) return { check: 'start', ...about, ok: true, message: 'disabled (enabled: false); not started' };
          const unset = unsetVariablesProblem(config, expansion, paths.secretsFile);
          if (unset) return { check: 'env', ...about, ok: false, message: unset.problem, fix: unset.fix };
          const startedAt = performance.now();
          try {
            const { tools, listFailures } = await pool.listDefinitions(name);
            outcomes.push({ server: name, ok: true });
            const ms = Math.round(performance.now() - startedAt);
            listFindings.set(
              name,
              listFailureWords(name, listFailures).map((words) => ({ check: 'lists', ...about, ok: false, ...words })),
            );
            return {
              check: 'start',
              ...about,
              ok: true,
              message: `starts${sandboxOf(config) ? ` in its sandbox (${sandboxText(config)})` : ''}, ${tools.length} tool${tools.length === 1 ? '' : 's'} listed (${ms} ms)`,
              tools: tools.length,
              ms,
            };
          } catch (error) {
            const message = errorMessage(error);
            outcomes.push({ server: name, ok: false, failure: failureOf(error, 'SERVER_START_FAILED') });
            const ms = Math.round(performance.now() - startedAt);
            // A server that speaks OAuth is logged in to with `loadout auth`; one that does not wants a header.
            if (config.type !== 'stdio' && isLoadoutError(error, 'NEEDS_AUTHORIZATION')) {
              return {
                check: 'auth',
                ...about,
                ok: false,
                ms,
                message: `needs authorization: ${config.url} wants an OAuth login`,
                fix: `loadout auth ${name}`,
              };
            }
            if (config.type !== 'stdio' && (await refusesAccess(error))) {
              return {
                check: 'auth',
                ...about,
                ok: false,
                ms,
                message: `needs authorization: ${config.url} refused the connection (${oneLine(message, 120)})`,
                fix: `add the credentials under headers: (e.g. Authorization: "Bearer \${TOKEN}") for ${name} in servers.yaml`,
              };
            }
            if (isLoadoutError(error, 'LIST_FAILED')) {
              return {
                check: 'lists',
                ...about,
                ok: false,
                ms,
                message: `starts, but its tools/list failed: ${oneLine(errorMessage(error.cause), 200)}`,
                fix: checkServerFix(name),
              };
            }
            // A program that could not be started says what to do itself: that is the one fix, the entry to write below it.
            const spawn = spawnFailureOf(error);
            if (spawn?.fix) {
              const entry = spawn.fix.entry === undefined ? '' : `\n${spawn.fix.entry}`;
              return { check: 'start', ...about, ok: false, ms, message: `does not start: ${spawn.problem}${entry}`, fix: spawn.fix.text };
            }
            const what = config.type === 'stdio' ? `command: ${[config.command, ...config.args].join(' ')}` : `url ${config.url}`;
            // The reason whole: a server's last stderr lines follow on lines of their own.
            const reason = (isLoadoutError(error) && error.reason) || message;
            return {
              check: 'start',
              ...about,
              ok: false,
              ms,
              message: `does not start: ${reason}`,
              fix: `check its ${what}${reason.includes('\n') ? '' : '; run it by hand to see its error'}`,
            };
          } finally {
            await pool.stopIfIdle(name);
          }
        }),
      ),
    );
    await recordDiscoveryOutcomes(runtime.discoveryRecords, pool.configs, outcomes);
    return Object.keys(pool.configs).flatMap((name, index) => [findings[index]!, ...(listFindings.get(name) ?? [])]);
  } finally {
    await runtime.close();
  }
}

// A server is seen twice only when a client starts it itself and starts loadout as well: after
// `setup --undo` the client lists its servers again but no longer loadout, which is no problem.
async function checkClients(servers: Record<string, ServerConfig>, clientEnv: ClientEnvironment): Promise<Finding[]> {
  const findings: Finding[] = [];
  const seenFiles = new Set<string>();
  const enabled = Object.fromEntries(Object.entries(servers).filter(([, config]) => config.enabled));
  for (const name of CLIENT_NAMES) {
    const client = clientDefinition(name, clientEnv);
    const listed: Array<{ label: string; entries: Record<string, unknown> }> = [];
    for (const location of client.locations) {
      let data: unknown;
      try {
        data = (await readClientFile(location)).data;
      } catch (error) {
        if (!seenFiles.has(location.file))
          findings.push({
            check: 'client-file',
            subject: client.title,
            ok: false,
            message: errorMessage(error),
            fix: `correct ${location.file} (${client.title} cannot read it either)`,
          });
        seenFiles.add(location.file);
        continue;
      }
      const entries = valueAt(data, location.jsonPath);
      if (typeof entries === 'object' && entries !== null)
        listed.push({ label: location.label, entries: entries as Record<string, unknown> });
    }
    if (!listed.some(({ entries }) => Object.entries(entries).some(([entryName, raw]) => startsLoadout(entryName, raw)))) continue;
    for (const { label, entries } of listed) {
      for (const [entryName, raw] of Object.entries(entries)) {
        const converted = convertServer(entryName, raw);
        // An entry the client has switched off is not started either.
        if (typeof converted === 'string' || converted.enabled === false) continue;
        const inLoadout = findSameServer(enabled, converted);
        if (!inLoadout) continue;
        const alias = inLoadout === entryName ? '' : ` (as '${entryName}')`;
        findings.push({
          check: 'duplicate',
          server: inLoadout,
          subject: `server ${inLoadout}`,
          ok: false,
          message: `listed both in ${label}${alias} and in loadout: the agent sees its tools twice`,
          fix: `loadout setup ${name} --move`,
        });
      }
    }
  }
  return findings;
}
