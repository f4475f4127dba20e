// `loadout serve`: run the gateway as an MCP server over stdio until the client goes away, or
// with --http for any number of clients over streamable HTTP until a signal.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { nanoid } from 'nanoid';
import { Drain, DrainingTransport, GatewayStdioTransport, createGateway, cutOffCalls, serveHttp } from '../../gateway/index.js';
import { AllowedHostSchema, AuthSettingsSchema, type AuthSettings } from '../../config/index.js';
import { LoadoutError, firstIssueText } from '../../shared/index.js';
import { startTelemetry } from '../../telemetry/index.js';
import { CLIENT_NAMES } from '../clients/clientFiles.js';
import { importOnFirstRun } from '../importServers.js';
import { commandEnvironment, openCommandStore } from '../program.js';
import { printNote } from '../output.js';

// Children get ~0.6 s before SIGKILL at shutdown; this cap (after the drain) only guards against a
// close that never settles. Over stdio the client is waiting to start its next session; a replica
// also ends its heartbeat, sends its spool and closes the store, which on a loaded host (or just
// after a store outage) has overrun 1.9 s: its orchestrator's grace period allows for the longer cap.
const STDIO_SHUTDOWN_LIMIT_MS = 1900;
const HTTP_SHUTDOWN_LIMIT_MS = 5000;
interface ServeOptions {
  equip?: string;
  http?: boolean;
  host: string;
  port: number;
  token: string[];
  allowOrigin: string[];
  allowedHost: string[];
  maxBodyMb: number;
  sessionIdleMinutes: number;
  maxSessions: number;
  maxSessionsPerPrincipal?: number;
  metrics?: boolean;
  metricsHost: string;
  metricsPort: number;
  drainSeconds: number;
  authIssuer?: string;
  authAudience?: string;
  authScope: string[];
  authGroupsClaim?: string;
}

/** Register `serve` on the program. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the gateway as an MCP server over stdio (or streamable HTTP with --http)')
    .option('--equip <toolset>', 'equip this toolset at start (overrides the remembered one; "all" for every tool)')
    .option('--http', 'serve streamable HTTP at /mcp instead of stdio')
    .option('--host <host>', 'HTTP: address to bind; other than loopback needs --token', '127.0.0.1')
    .option(
      '--port <port>',
      'HTTP: port to listen on (0 picks a free one)',
      numberOption('port', (n) => Number.isInteger(n) && n >= 0 && n <= 65_535, 'a whole number from 0 to 65535'),
      7077,
    )
    .addOption(
      new Option('--token <token>', 'HTTP: bearer token every request must carry (repeatable: each one has its own equipped toolset)')
        .argParser(collect)
        .default([], '$LOADOUT_TOKEN'),
    )
    .option('--auth-issuer <url>', 'HTTP: accept OAuth access tokens from this authorization server instead of --token (auth.issuer)')
    .option(
      '--auth-audience <url>',
      "HTTP: loadout's canonical URL, the only token audience accepted (auth.audience; default: its /mcp URL)",
    )
    .option('--auth-scope <scope>', 'HTTP: a scope every access token must carry (repeatable; auth.scopes)', collect, [])
    .option('--auth-groups-claim <claim>', "HTTP: the token claim listing the caller's groups (auth.groups_claim; default: groups)")
    .option('--allow-origin <origin>', 'HTTP: also accept requests from this browser origin (repeatable)', collect, [])
    .option(
      '--allowed-host <name>',
      "HTTP: also accept this Host header, a proxy's public name (NAME or NAME:PORT; repeatable; gateway.allowed_hosts)",
      (value: string, previous: string[]) => collect(checkedHost(value), previous),
      [],
    )
    .option(
      '--max-body-mb <mb>',
      'HTTP: largest request body accepted',
      numberOption('max-body-mb', (n) => n > 0 && Number.isFinite(n), 'a number above 0'),
      4,
    )
    .option(
      '--session-idle-minutes <minutes>',
      'HTTP: close sessions idle this long (0: never)',
      numberOption('session-idle-minutes', (n) => n >= 0 && Number.isFinite(n), 'a number of 0 or more'),
      30,
    )
    .option(
      '--max-sessions <count>',
      'HTTP: most sessions at once; a new one ends the session idle longest',
      numberOption('max-sessions', (n) => Number.isInteger(n) && n >= 1, 'a whole number of 1 or more'),
      256,
    )
    .option(
      '--max-sessions-per-principal <count>',
      "HTTP: most sessions of one caller at once; a new one ends that caller's idle longest (default: --max-sessions)",
      numberOption('max-sessions-per-principal', (n) => Number.isInteger(n) && n >= 1, 'a whole number of 1 or more'),
    )
    .option(
      '--drain-seconds <seconds>',
      'on SIGTERM/SIGINT: refuse new requests and let those under way finish for this long, then cut them off and exit',
      numberOption('drain-seconds', (n) => n >= 0 && Number.isFinite(n), 'a number of 0 or more'),
      30,
    )
    .option('--metrics', 'HTTP: also serve Prometheus metrics at /metrics, on a listener of its own (--metrics-host, --metrics-port)')
    .option(
      '--metrics-host <host>',
      'HTTP: address the /metrics listener binds (no token there: keep it reachable by the scraper only)',
      '127.0.0.1',
    )
    .option(
      '--metrics-port <port>',
      'HTTP: port of the /metrics listener (0 picks a free one)',
      numberOption('metrics-port', (n) => Number.isInteger(n) && n >= 0 && n <= 65_535, 'a whole number from 0 to 65535'),
      9464,
    )
    .action(async (options: ServeOptions, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const given = options.token.filter((token) => token !== '');
      const tokens = given.length > 0 ? given : process.env.LOADOUT_TOKEN ? [process.env.LOADOUT_TOKEN] : [];
      if (options.metrics && !options.http)
        command.error('error: --metrics needs --http (stdio has no /metrics; export with OTEL_* instead)');
      // In store mode servers.yaml is configuration every replica reads, never written by one.
      if (!storeUrl) await importOnFirstRun(paths);
      // Drawn first: telemetry's resource names the replica (service.instance.id) as its heartbeat does.
      const replicaId = nanoid();
      // Before the store and the gateway, which are handed it (their statements and first downstream
      // connections are measured); loads nothing while off.
      const telemetry = await startTelemetry({ prometheus: options.metrics === true, logger, replicaId });
      const store = await openCommandStore(storeUrl, logger, { listen: true, localCopy: paths.dataDir, telemetry });
      const gateway = await createGateway({
        paths,
        logger,
        equip: options.equip,
        store,
        stdoutFree: options.http === true,
        replicaId,
        telemetry,
      });
      // A start that fails after the gateway opened leaves no child process or exporter behind.
      const closeAndThrow = async (error: unknown): Promise<never> => {
        await gateway.close();
        await telemetry.close();
        throw error;
      };
      // serveHttp checks the bind against the auth settings as resolved (flags over servers.yaml's auth:).
      const auth = options.http
        ? await Promise.resolve()
            .then(() => authSettings(gateway.auth, options))
            .catch(closeAndThrow)
        : undefined;
      const http = options.http
        ? await serveHttp(gateway, {
            host: options.host,
            port: options.port,
            tokens,
            auth,
            allowedOrigins: options.allowOrigin,
            allowedHosts: [...options.allowedHost, ...gateway.allowedHosts],
            maxBodyBytes: Math.round(options.maxBodyMb * 1024 * 1024),
            sessionIdleMs: options.sessionIdleMinutes * 60_000,
            maxSessions: options.maxSessions,
            ...(options.maxSessionsPerPrincipal ? { maxSessionsPerPrincipal: options.maxSessionsPerPrincipal } : {}),
            ...(telemetry.servePrometheus && {
              metrics: { host: options.metricsHost, port: options.metricsPort, serve: telemetry.servePrometheus },
            }),
            ...(store ? { store } : {}),
            logger,
          }).catch(closeAndThrow)
        : undefined;
      // Over stdio, requests are counted on the wire; over HTTP, httpDrain.ts counts the POSTs.
      const stdioDrain = http ? undefined : new Drain();
      const cutOff = cutOffCalls(gateway.context.pool, options.drainSeconds);
      let stopping = false;
      // A signal drains first (the requests under way are answered); a client gone (stdin closed) has no one to answer.
      const stop = async (reason: string, drains: boolean): Promise<void> => {
        if (stopping) {
          // A second signal, or the client leaving mid-drain: cut off what is under way now.
          http?.cutShort();
          stdioDrain?.cutShort();
          return;
        }
        stopping = true;
        if (drains) {
          logger.info({ reason, drainSeconds: options.drainSeconds }, 'draining: refusing new requests, finishing those under way');
          const drainMs = options.drainSeconds * 1000;
          const drained = await (http ? http.drain(drainMs, cutOff) : stdioDrain!.start(drainMs, cutOff));
          if (!drained) logger.warn({ drainSeconds: options.drainSeconds }, 'requests still under way at --drain-seconds were cut off');
        }
        logger.info({ reason }, 'shutting down');
        // Each stdio child is ended within ~1 s (stdin end, SIGTERM, SIGKILL to its group), all at once.
        const limitMs = http ? HTTP_SHUTDOWN_LIMIT_MS : STDIO_SHUTDOWN_LIMIT_MS;
        setTimeout(() => {
          logger.error({ limitMs }, 'shutdown took too long; exiting anyway');
          process.exit(1);
        }, limitMs).unref();
        await http?.close();
        await gateway.close();
        await telemetry.close();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop('SIGINT', true));
      process.on('SIGTERM', () => void stop('SIGTERM', true));
      if (http) {
        const guarded = auth ? ' (access token required)' : tokens.length > 0 ? ' (bearer token required)' : '';
        // Before the MCP line, which tells a waiting script (and the tests) that the replica is up.
        if (http.metricsUrl) printNote(`serving metrics at ${http.metricsUrl} (no token: reachable by whoever reaches that address)`);
        printNote(`serving MCP at ${http.url}${guarded}`);
        return;
      }
      const notice = terminalNotice(process.stdin.isTTY);
      if (notice) printNote(notice);
      // Claude Code ends a stdio server by closing its stdin.
      process.stdin.on('end', () => void stop('stdin closed', false));
      const transport = new GatewayStdioTransport();
      // A transport that closed for any other reason (a stdin error) leaves no client: stop too.
      void transport.closed.then(() => stop('stdio transport closed', false));
      const draining = new DrainingTransport(transport, stdioDrain!);
      await gateway.serveStdio(telemetry.serverTransport(draining, { transport: 'pipe', hidden: gateway.hiddenFrom() }), (error) =>
        logger.debug({ mod: 'gateway', err: error.message }, 'stdio'),
      );
    });
}

/**
 * The line for a person who ran `loadout serve` in a terminal, where it would otherwise sit silent
 * and ignore what is typed; none when a client started it (stdin is a pipe). It points to setup,
 * as the README does: setup adds loadout as it should be added (Claude Code: user scope,
 * alwaysLoad), where a bare `claude mcp add` would add it to one project only.
 */
export function terminalNotice(stdinIsTTY: boolean | undefined): string | undefined {
  if (!stdinIsTTY) return undefined;
  const others = CLIENT_NAMES.filter((client) => client !== 'claude-code').join(', ');
  return (
    'serve is waiting for an MCP client on stdin; typing here does nothing. Let a client start it instead: ' +
    `"loadout setup claude-code" adds it to Claude Code (or setup ${others}); Ctrl-C stops this one.`
  );
}

// `auth:` of servers.yaml with the --auth-* flags over it; the flags alone need --auth-issuer.
function authSettings(file: AuthSettings | undefined, options: ServeOptions): AuthSettings | undefined {
  const issuer = options.authIssuer ?? file?.issuer;
  if (!issuer) {
    if (options.authAudience || options.authScope.length > 0 || options.authGroupsClaim) {
      throw new LoadoutError('INVALID_ARGUMENT', 'The --auth-* options need --auth-issuer (or auth.issuer in servers.yaml)');
    }
    return undefined;
  }
  const parsed = AuthSettingsSchema.safeParse({
    ...file,
    issuer,
    ...(options.authAudience ? { audience: options.authAudience } : {}),
    ...(options.authScope.length > 0 ? { scopes: options.authScope } : {}),
    ...(options.authGroupsClaim ? { groups_claim: options.authGroupsClaim } : {}),
  });
  if (!parsed.success) throw new LoadoutError('INVALID_ARGUMENT', `Invalid --auth-* option: ${firstIssueText(parsed.error)}`);
  return parsed.data;
}

function checkedHost(value: string): string {
  const parsed = AllowedHostSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`--allowed-host: ${firstIssueText(parsed.error)}.`);
  return parsed.data;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

// Commander prints the message after "option '--x' argument 'y' is invalid." and exits 1.
function numberOption(name: string, isValid: (value: number) => boolean, expected: string): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (value.trim() === '' || !isValid(number)) throw new InvalidArgumentError(`--${name} must be ${expected}.`);
    return number;
  };
}
