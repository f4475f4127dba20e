// `loadout status`: each server's transport, mode, idle timeout and tool counts from the config
// dir, plus — when a gateway is running for this config dir — whether it is connected now; for a
// server with OAuth, its login's state, or for a per-user one how many principals authorized it.
// With --store, the replicas serving on that store (those heard from in the last 30 s).
import type { Command } from 'commander';
import {
  expansionEnv,
  invalidEntryProblem,
  oauthSettingsOf,
  sandboxText,
  serverProblemText,
  serversFileNotice,
  type OAuthRecord,
  type ServerConfig,
} from '../../config/index.js';
import { fileOAuthRecords, oauthTargetOf, storeOAuthRecords, type AllOAuthRecords, type EraVerdict } from '../../downstream/index.js';
import {
  discoveryRecordsOf,
  failedText,
  readDiscoveryRecords,
  readRunningGateways,
  retryText,
  REPLICA_SILENT_MS,
  type DiscoveryRecord,
} from '../../runtime/index.js';
import type { LoadoutErrorCode } from '../../shared/index.js';
import type { HeardReplica } from '../../store/index.js';
import { loadConfigView, toolsOfServer } from '../configView.js';
import { listFailureLines } from '../listFailures.js';
import { paint, printJson, printLines, printTable } from '../output.js';
import { commandEnvironment, withCommandStore } from '../program.js';

/** Register `status` on the program. */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('show each server: transport, lazy/always-on, idle timeout, tool counts, connected now; exits 1 if one failed')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const [gateways, { view, records, oauthOf, replicas, storeName }] = await Promise.all([
        readRunningGateways(paths),
        withCommandStore(storeUrl, logger, async (store) => {
          // Postgres mode: who serves on this store, whatever machine it runs on.
          const replicas = store ? await store.fleet.replicas.heard(REPLICA_SILENT_MS) : undefined;
          // As `serve` runs on it: the last good parse while servers.yaml does not parse.
          const view = await loadConfigView(paths, store, { lastGood: true });
          const oauthRecords = store ? storeOAuthRecords(store.oauth) : fileOAuthRecords(paths.oauthDir);
          const env = expansionEnv(paths.secretsFile);
          const authorized = await authorizedPrincipals(oauthRecords, view.config.servers, env);
          const oauthEntries = await Promise.all(
            Object.entries(view.config.servers)
              .filter(([, config]) => oauthSettingsOf(config))
              .map(async ([name, config]) => [name, await oauthStatusOf(oauthRecords, name, config, authorized)] as const),
          );
          const records = await readDiscoveryRecords(await discoveryRecordsOf(paths, store), view.config.servers);
          return { view, records, oauthOf: new Map(oauthEntries), replicas, storeName: store?.description };
        }),
      ]);
      const connected = new Set(gateways.flatMap((gateway) => gateway.connected));
      const servers = Object.entries(view.config.servers).map(([name, config]) => {
        const tools = toolsOfServer(view, name);
        const oauth = oauthOf.get(name);
        const discovered = view.definitions[name] !== undefined;
        const recorded = config.enabled ? records.get(name) : undefined;
        // Failed: the last attempt (serve's, refresh's or doctor's) failed, even of a server listed
        // before (its cached tools are still offered); pending: a running gateway has yet to list it.
        // A listed server's failed authorization is left to its OAuth line, which reads the tokens as
        // they are now: a login or a connection with them forgets the record, but a key set right
        // since (each process reads its own) is seen by no write until the tokens are next used.
        const record = discovered && recorded?.failure.code === 'NEEDS_AUTHORIZATION' ? undefined : recorded;
        const discovery = record
          ? { state: 'failed' as const, ...failedState(record) }
          : !discovered && config.enabled && gateways.length
            ? { state: 'pending' as const }
            : null;
        return {
          name,
          type: config.type,
          enabled: config.enabled,
          mode: config.always_on ? 'always-on' : 'lazy',
          idleTimeoutMinutes: config.always_on ? null : config.idle_timeout_minutes,
          discovered,
          discovery,
          discoveredAt: view.definitions[name]?.discoveredAt ?? null,
          // Optional lists (prompts, resources, templates) it failed to answer at its last listing, with why.
          listFailures: view.definitions[name]?.listFailures ?? {},
          // The MCP era its last connection spoke ('modern': 2026-07-28, 'legacy': 2025), and when a probe found it.
          era: eraOf(view.definitions[name]?.era),
          // Its sandbox's policy, false for a stdio server without one, null for an HTTP/SSE server (not a process of loadout's).
          sandbox: config.type === 'stdio' ? (config.sandbox ?? false) : null,
          tools: {
            enabled: tools.filter((tool) => !tool.stale && tool.enabled).length,
            disabled: tools.filter((tool) => !tool.stale && !tool.enabled).length,
            stale: tools.filter((tool) => tool.stale).length,
            changed: tools.filter((tool) => tool.changed).length,
          },
          connected: gateways.length ? connected.has(name) : null,
          oauth: oauth?.oauth ?? null,
          authorizedPrincipals: oauth?.authorizedPrincipals ?? null,
        };
      });
      // Left out of every gateway and command until corrected: each with its file:line:col problem.
      const brokenServers = [...view.brokenServers].map(([name, problem]) => ({ name, problem }));
      // Exit 1 when a configured server cannot serve (its entry, its start or its login failed), for
      // scripts; not process.exit: let stdout drain, main.ts owns exiting.
      const failing =
        view.fileProblem ||
        brokenServers.length ||
        servers.some((server) => server.discovery?.state === 'failed' || server.oauth === 'needs-login');
      if (failing) process.exitCode = 1;
      if (options.json) {
        printJson({
          configDir: paths.configDir,
          gateways: gateways.map(({ pid, startedAt }) => ({ pid, startedAt })),
          ...(replicas && { replicas }),
          servers,
          brokenServers,
          serversFile: view.fileProblem ?? null,
        });
        return;
      }
      if (view.fileProblem) printLines(paint('red', serversFileNotice(view.fileProblem)));
      for (const { name, problem } of brokenServers) printLines(paint('red', serverProblemText(name, invalidEntryProblem(problem))));
      if (!servers.length) {
        printLines(`No servers in ${paths.serversFile}. Add some, or import them with "loadout init --from FILE".`);
        if (replicas && storeName !== undefined) printReplicas(replicas, storeName);
        return;
      }
      printTable(
        ['server', 'type', 'mode', 'idle', 'sandbox', 'tools', 'disabled', 'stale', 'changed', 'connected'],
        servers.map((server) => [
          server.enabled ? server.name : `${server.name} ${paint('dim', '(off)')}`,
          server.type,
          server.mode,
          server.idleTimeoutMinutes === null ? '-' : `${server.idleTimeoutMinutes} min`,
          sandboxText(view.config.servers[server.name]!),
          server.discovered
            ? String(server.tools.enabled)
            : server.discovery?.state === 'failed'
              ? paint('red', 'failed')
              : paint('yellow', server.discovery?.state === 'pending' ? 'pending' : 'not discovered'),
          String(server.tools.disabled),
          String(server.tools.stale),
          server.tools.changed ? paint('red', String(server.tools.changed)) : '0',
          server.connected === null ? '-' : server.connected ? paint('green', 'yes') : 'no',
        ]),
      );
      for (const { name, discovery, discovered } of servers) {
        if (discovery?.state !== 'failed') continue;
        printLines(paint('red', `${name}: ${failureText(name, discovery, discovered, gateways.length > 0)}`), discovery.error);
      }
      for (const server of servers) printLines(...listFailureLines(server.name, server.listFailures).map((line) => paint('yellow', line)));
      for (const server of servers.filter((entry) => entry.oauth === 'needs-login')) {
        printLines(paint('red', `${server.name}: needs authorization: run loadout auth ${server.name}`));
      }
      for (const { name, authorizedPrincipals: count } of servers) {
        if (count === null) continue;
        printLines(
          `${name}: per-user credentials, authorized by ${count} principal${count === 1 ? '' : 's'} (each signs in on their first call).`,
        );
      }
      if (replicas && storeName !== undefined) printReplicas(replicas, storeName);
      const running = gateways.map((gateway) => gateway.pid).join(', ');
      if (running) printLines(`Gateway running (pid ${running}).`);
      // In store mode the replicas above are the fleet; a gateway of this config dir is only one of them.
      else if (!replicas) printLines('No gateway running for this config dir ("connected" shows "-").');
      if (servers.some((server) => server.tools.changed))
        printLines(
          'Changed tools differ from the approved definition; review with "loadout list", approve with "loadout refresh --accept-changed".',
        );
    });
}

// The replicas heard from on the store, one row each; none is a line saying so.
function printReplicas(replicas: readonly HeardReplica[], storeName: string): void {
  const silentS = REPLICA_SILENT_MS / 1000;
  if (!replicas.length) {
    printLines(`No replica serving on ${storeName} (none heard from in the last ${silentS} s; "connected" shows "-").`);
    return;
  }
  printLines(`${replicas.length} replica${replicas.length === 1 ? '' : 's'} serving on ${storeName}:`);
  const secondsAgo = (iso: string): string => `${Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))} s ago`;
  printTable(
    ['replica', 'host', 'pid', 'version', 'started', 'last heard', 'sessions', 'listening'],
    replicas.map((replica) => [
      replica.id,
      replica.host,
      String(replica.pid),
      replica.version,
      replica.started,
      secondsAgo(replica.lastHeard),
      String(replica.sessions),
      replica.listening ? paint('green', 'yes') : paint('red', 'no'),
    ]),
  );
}

/** What status says of a server's OAuth, and for a per-user server how many principals authorized it. */
interface OAuthStatus {
  /**
   * 'needs-login' once the server refused loadout and only `loadout auth` can fix it (or its
   * tokens are sealed with another key); 'per-user': each principal brings their own.
   */
  oauth: 'authorized' | 'needs-login' | 'per-user' | null;
  authorizedPrincipals: number | null;
}

// A per-user server is called with its principals' tokens: theirs are counted (`authorized`), the shared login is not its state.
async function oauthStatusOf(
  records: AllOAuthRecords,
  name: string,
  config: ServerConfig,
  authorized: ReadonlyMap<string, number>,
): Promise<OAuthStatus> {
  if (config.type !== 'stdio' && config.credentials === 'per-user')
    return { oauth: 'per-user', authorizedPrincipals: authorized.get(name) ?? 0 };
  const record = await records.read(name).catch((): OAuthRecord | 'unreadable' => 'unreadable');
  const oauth = record === 'unreadable' || record?.needsAuthorizationSince ? 'needs-login' : record?.tokens ? 'authorized' : null;
  return { oauth, authorizedPrincipals: null };
}

// How many principals authorized each per-user server, every record read once (in store mode, each unsealed once).
function authorizedPrincipals(
  records: AllOAuthRecords,
  servers: Readonly<Record<string, ServerConfig>>,
  env: NodeJS.ProcessEnv,
): Promise<Map<string, number>> {
  const recordUrls = new Map<string, string>();
  for (const [name, config] of Object.entries(servers)) {
    if (config.type === 'stdio' || config.credentials !== 'per-user') continue;
    const recordUrl = recordUrlOf(records, name, config, env);
    if (recordUrl !== undefined) recordUrls.set(name, recordUrl);
  }
  return recordUrls.size === 0 ? Promise.resolve(new Map<string, number>()) : records.authorizedPrincipals(recordUrls);
}

// The URL a server's records are kept under; undefined while a `${VAR}` of its url is unset (then
// no record can be of it: a connection could not start either).
// `env` holds secrets.env's variables too, as the gateway expands the server's URL with them.
function recordUrlOf(records: AllOAuthRecords, name: string, config: ServerConfig, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return oauthTargetOf(name, config, env, records)?.recordUrl;
  } catch {
    return undefined;
  }
}

// When a server's last start failed and who tries it next. A running gateway retries only a server
// it has no tools of; one listed before keeps its cached tools until refresh (or doctor) starts it.
function failureText(
  name: string,
  times: Pick<DiscoveryRecord, 'failedAt' | 'failures' | 'retryAt'>,
  discovered: boolean,
  gatewayRunning: boolean,
): string {
  if (discovered) return `last start ${failedText(times)}; its tools are the ones listed before; "loadout refresh ${name}" tries again.`;
  return gatewayRunning
    ? `discovery ${retryText(times)} (by "loadout serve"; "loadout refresh ${name}" tries now).`
    : `discovery ${failedText(times)}; "loadout refresh ${name}" tries again.`;
}

function eraOf(verdict: EraVerdict | undefined): { era: EraVerdict['era']; checkedAt: string } | null {
  return verdict ? { era: verdict.era, checkedAt: verdict.checkedAt } : null;
}

// A record's config hash is bookkeeping, not status.
// What `status --json` says of a failed discovery: the record without its config key, its failure
// as `error` (the text) and `code`.
function failedState({ config: _config, failure, ...times }: DiscoveryRecord): Omit<DiscoveryRecord, 'config' | 'failure'> & {
  error: string;
  code: LoadoutErrorCode;
} {
  return { ...times, error: failure.text, code: failure.code };
}
