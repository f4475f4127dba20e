// One live MCP client connection to one downstream server, over stdio, SSE or streamable HTTP.
// It knows how to start, send a request (through its RequestLayer), list tools (following
// pagination) and close; when to start or stop it is the pool's business. The SDK client and its
// transports are imported when a server first needs them (the HTTP/SSE clients pull in OAuth and
// EventSource code), so a warm start loads none of them. Its transports are connectionTransport.ts's,
// how its failures are told apart and worded connectionErrors.ts's, what it lists serverDefinitions.ts's.
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import type {
  Client,
  CreateMessageResult,
  ElicitResult,
  Transport,
  JSONRPCNotification,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client';
import { oauthSettingsOf, type ServerConfig } from '../config/index.js';
import {
  Cancellation,
  LOADOUT_VERSION,
  LoadoutError,
  errorMessage,
  isLoadoutError,
  lazySchemaValidator,
  scanParamHeaders,
  settleWithin,
  untilAborted,
  type Logger,
} from '../shared/index.js';
import {
  MalformedListError,
  listFailureOf,
  isAuthorizationFailure,
  isListAnswerFailure,
  isSessionLost,
  isTimeout,
  refuseRelayedRequest,
  refusedCredentials,
  startFailure,
  type ServerCrash,
} from './connectionErrors.js';
import { childOf, createTransport, maskedValues } from './connectionTransport.js';
import {
  ERA_PROBE_TIMEOUT_MS,
  isEraRefusal,
  priorDiscovery,
  refusesProtocolVersion,
  usableVerdict,
  verdictOf,
  type EraVerdict,
  type ProtocolEra,
} from './era.js';
import type { RelayedRequest } from './inFlightCallers.js';
import { ModernRequests, fromListen } from './modernRequests.js';
import type { OAuthRecords } from './oauthRecords.js';
import { RequestLayer, type RequestOptions } from './requestLayer.js';
import { OPTIONAL_LISTS, isListOf, type ListFailures, type ServerAbout, type ServerDefinitions } from './serverDefinitions.js';
import { maskValues } from './stderrTail.js';
import type { Telemetry } from '../telemetry/index.js';

/** Identity loadout presents to downstream servers. */
export const CLIENT_INFO = { name: 'loadout', version: LOADOUT_VERSION } as const;

/** Callbacks a connection reports to while open. */
export interface ConnectionHooks {
  /** Fires once when the connection ends for any reason (crash, remote close, or our own close()). */
  onClose?: () => void;
  /** A notification from the server (anything but progress of one of our requests). */
  onNotification?: (notification: JSONRPCNotification) => void;
  /** Answer a sampling/elicitation request from the server; throw a ProtocolError to refuse it. */
  onRelayedRequest?: (request: RelayedRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;
}

const SESSION_END_WAIT_MS = 2000;

// Declared so servers may ask for sampling and elicitation; loadout relays each request to the
// client session that made the call, or refuses it with a clear error. Roots are not declared:
// they belong to one client, and a shared downstream cannot be told whose (a 2026-07-28 server is
// told them per request instead, and asks within a call, whose client it names).
/** Capabilities loadout declares to downstream servers (requests are relayed to the calling client). */
export const CLIENT_CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} } };

/** Options of DownstreamConnection.open. */
interface OpenOptions extends ConnectionHooks {
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Aborted when loadout stops; a stdio child is then ended within about a second. */
  shutdown?: AbortSignal;
  timeoutMs?: number;
  oauthRecords?: OAuthRecords;
  /** The era a previous start found: trusted (while fresh) instead of probing again. */
  era?: EraVerdict;
  /** Where the connection's requests are traced and measured (CLIENT spans). */
  telemetry: Telemetry;
  /** loadout's own config and data dirs, which no sandboxed server may read. */
  protectedDirs?: readonly string[];
}

/** A started client connection to one downstream server. */
export class DownstreamConnection {
  readonly #server: string;
  readonly #client: Client;
  readonly #layer: RequestLayer;
  /** The transport itself, under the request layer (and telemetry's, when on): a child, an HTTP session. */
  readonly #wire: Transport;
  /** Whether a refused credential means an OAuth login (else the server's own headers are wrong). */
  readonly #usesOAuth: boolean;
  /** The server no longer knows this connection's session (it restarted): there is nothing to end. */
  #sessionLost = false;
  #closed: Promise<void> | undefined;
  /** The era negotiated (or taken from the cache) and when it was found. */
  readonly eraVerdict: EraVerdict;
  /** A modern server's requests; undefined for a legacy one. */
  readonly #modern: ModernRequests | undefined;
  /** Opened from a cached modern verdict and not answered yet: a refusal then means the verdict is stale. */
  #unconfirmed: boolean;
  readonly #logger: Logger;

  private constructor(
    server: string,
    client: Client,
    layer: RequestLayer,
    wire: Transport,
    usesOAuth: boolean,
    verdict: EraVerdict,
    modern: { logger: Logger; relay: NonNullable<ConnectionHooks['onRelayedRequest']>; unconfirmed: boolean },
  ) {
    this.#server = server;
    this.#usesOAuth = usesOAuth;
    this.#client = client;
    this.#layer = layer;
    this.#wire = wire;
    this.eraVerdict = verdict;
    this.#unconfirmed = modern.unconfirmed;
    this.#logger = modern.logger;
    if (verdict.era === 'modern') {
      this.#modern = new ModernRequests({
        server,
        client,
        layer,
        clientInfo: CLIENT_INFO,
        capabilities: CLIENT_CAPABILITIES,
        relay: modern.relay,
        logger: modern.logger,
      });
    }
  }

  /** The protocol era spoken with the server. */
  get era(): ProtocolEra {
    return this.eraVerdict.era;
  }

  /**
   * Spawn or connect to `config` and open the connection in the era the server speaks (probed, or
   * taken from `options.era` while fresh); `hooks` hear what the server does.
   */
  static async open(serverName: string, config: ServerConfig, options: OpenOptions): Promise<DownstreamConnection> {
    const prior = usableVerdict(options.era);
    const timeoutMs = options.timeoutMs ?? config.timeout_seconds * 1000;
    // A stdio server silent on the probe for a few seconds is taken for a legacy one; over HTTP,
    // silence is an outage, so the probe may take the whole start.
    const probeTimeoutMs = config.type === 'stdio' ? Math.min(ERA_PROBE_TIMEOUT_MS, timeoutMs) : timeoutMs;
    try {
      return await DownstreamConnection.#open(serverName, config, options, { prior, timeoutMs, probeTimeoutMs });
    } catch (error) {
      const cause = (error as Error).cause;
      if (prior && SdkError.isInstance(cause) && cause.code === SdkErrorCode.EraNegotiationFailed) {
        // The SDK cannot start from the remembered verdict (a discover answer it does not read, no
        // version in common): like a stale one, it is forgotten and the server probed afresh.
        options.logger.info({ err: errorMessage(error) }, 'the remembered era is unusable; probing the server again');
        return DownstreamConnection.open(serverName, config, { ...options, era: undefined });
      }
      const probed = config.type === 'stdio' && prior === undefined && !options.signal?.aborted;
      if (!probed || !isLoadoutError(error, 'SERVER_START_FAILED') || isTimeout(cause)) throw error;
      if (refusesProtocolVersion(cause)) {
        // A modern-only server slow to start (npx) answered the probe too late and refused the
        // initialize that followed: it is asked again, with the whole start to answer.
        options.logger.debug({ err: errorMessage(error) }, 'the server refused the 2025 era; probing it again');
        return DownstreamConnection.#open(serverName, config, options, { timeoutMs, probeTimeoutMs: timeoutMs });
      }
      // A stdio server that exits or errs on the probe (an SDK that ends on any request before
      // initialize) is a legacy one: it is started afresh and spoken to without a probe.
      options.logger.debug({ err: errorMessage(error) }, 'the era probe failed; starting the server again in the 2025 era');
      return DownstreamConnection.#open(serverName, config, options, {
        prior: { era: 'legacy', checkedAt: new Date().toISOString() },
        timeoutMs,
        probeTimeoutMs,
      });
    }
  }

  static async #open(
    serverName: string,
    config: ServerConfig,
    options: OpenOptions,
    // prior: the era to start in without a probe; timeoutMs: how long the start may take (open()
    // works it out once for every attempt); probeTimeoutMs: how long the probe may, if there is one.
    start: { prior?: EraVerdict; timeoutMs: number; probeTimeoutMs: number },
  ): Promise<DownstreamConnection> {
    const { prior, timeoutMs } = start;
    const env = options.env ?? process.env;
    const masked = maskedValues(config, env);
    const transport = await createTransport(serverName, config, {
      env,
      logger: options.logger,
      oauthRecords: options.oauthRecords,
      shutdown: options.shutdown,
      masked,
      ...(options.protectedDirs ? { protectedDirs: options.protectedDirs } : {}),
    });
    const usesOAuth = options.oauthRecords !== undefined && oauthSettingsOf(config) !== undefined;
    // Traced under the request layer, so each span sees the id and `_meta` that go on the wire.
    const peer = { serverName, ...('url' in config && { url: config.url }) };
    const layer = new RequestLayer(options.telemetry.clientTransport(transport, peer), config.timeout_seconds * 1000, {
      onNotification: (notification) => {
        const heard = fromListen(notification);
        if (heard) options.onNotification?.(heard);
      },
    });
    const { Client, SseError } = await import('@modelcontextprotocol/client');
    const client = new Client(CLIENT_INFO, {
      capabilities: CLIENT_CAPABILITIES,
      jsonSchemaValidator: lazySchemaValidator(),
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: start.probeTimeoutMs } },
    });
    const relay = options.onRelayedRequest ?? refuseRelayedRequest;
    // The upstream client's answer goes back as it came; the Client checks it against the method's result schema.
    client.setRequestHandler('sampling/createMessage', (request, ctx) => relay(request, ctx.mcpReq.signal) as Promise<CreateMessageResult>);
    client.setRequestHandler('elicitation/create', (request, ctx) => relay(request, ctx.mcpReq.signal) as Promise<ElicitResult>);
    let connection: DownstreamConnection | undefined;
    let closedNotified = false;
    client.onclose = () => {
      if (closedNotified) return;
      closedNotified = true;
      // However it ended (a crash, the pool's close): its listen stream has no client to reopen on.
      if (connection) connection.#modern?.close();
      options.onClose?.();
    };
    client.onerror = (error) => {
      options.logger.debug({ err: errorMessage(error) }, 'downstream transport error');
      // A dropped SSE stream cannot be resumed (its EventSource would reconnect to a new session
      // that was never initialized): end the connection so the next use starts a fresh one. A
      // streamable-HTTP session is checked by the next request instead (its 404 is retried).
      if (connection && SseError.isInstance(error)) connection.#loseSession();
    };
    try {
      const connecting = client.connect(layer, {
        signal: options.signal,
        timeout: timeoutMs,
        ...(prior ? { prior: priorDiscovery(prior) } : {}),
      });
      // The SDK's era probe does not heed the signal: a shutdown must not wait for it to time out.
      await untilAborted(connecting, options.signal);
    } catch (error) {
      // Closed first: a child's last stderr lines and its exit are known once it is gone.
      await layer.close().catch(() => undefined);
      if (await isAuthorizationFailure(error)) throw refusedCredentials(serverName, usesOAuth);
      const reason = maskValues(startFailure(error, transport, timeoutMs), masked);
      throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' failed to start: ${reason}`, { cause: error, reason });
    }
    connection = new DownstreamConnection(serverName, client, layer, transport, usesOAuth, prior ?? verdictOf(client), {
      logger: options.logger,
      relay,
      unconfirmed: prior?.era === 'modern',
    });
    try {
      // A listen stream the server opened confirms a remembered era: a crash after it is a crash.
      if (await connection.#modern?.start()) connection.#unconfirmed = false;
    } catch (error) {
      if (prior?.era === 'modern' && isEraRefusal(error, 'listen')) {
        // Remembered as modern, it refuses the modern era's listen: it speaks 2025 now. Probe it
        // afresh as a server never seen, so one that exits on the probe too is started in 2025.
        options.logger.info({ err: errorMessage(error) }, 'the remembered era is stale; probing the server again');
        await connection.close();
        return DownstreamConnection.open(serverName, config, { ...options, era: undefined });
      }
      connection.#modern?.retryListen(errorMessage(error));
    }
    return connection;
  }

  /**
   * Send one request and return the server's result object unchanged (see RequestLayer). A
   * server that answers 404 to the session (it restarted) fails it with SESSION_LOST, which
   * means it was not processed; one that wants a new login fails it with NEEDS_AUTHORIZATION.
   */
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<Record<string, unknown>> {
    const sent = this.#modern ? this.#modern.request(method, params, options) : this.#layer.request(method, params, options);
    if (!this.#unconfirmed) return sent.catch((error: unknown) => this.#failure(error));
    return sent.then(
      (result) => ((this.#unconfirmed = false), result),
      (error: unknown) => this.#failure(error),
    );
  }

  /**
   * The server's tools, all pages. An answer that is an error or malformed fails with LIST_FAILED,
   * which says the server started (its start failures are SERVER_START_FAILED).
   */
  async listTools(options: { signal?: AbortSignal } = {}): Promise<Tool[]> {
    try {
      return this.#callable(await this.#listAll<Tool>('tools/list', 'tools', 'name', options));
    } catch (error) {
      if (!isListAnswerFailure(error)) throw error;
      throw new LoadoutError(
        'LIST_FAILED',
        `Server '${this.#server}' started, but its tools/list failed (${errorMessage(error)}); its tools stay unknown until it lists them: check the server, then run loadout refresh ${this.#server}`,
        { cause: error },
      );
    }
  }

  /**
   * Tools, and the prompts, resources and resource templates the server declared, all pages.
   * Tools are what matters: only their failure fails the whole; an optional list the server
   * answers with an error (often -32601 for a list it declared but never implemented) is left
   * out and named in `listFailures`.
   */
  async listDefinitions(options: { signal?: AbortSignal } = {}): Promise<ServerDefinitions> {
    const capabilities = this.serverCapabilities;
    const declared = OPTIONAL_LISTS.filter((entry) => capabilities !== undefined && entry.declared(capabilities));
    const [tools, ...outcomes] = await Promise.all([
      this.listTools(options),
      ...declared.map(({ method, list, idField }) =>
        this.#listAll<Record<string, unknown>>(method, list, idField, options).then(
          (items) => ({ items }),
          (error: unknown) => {
            if (!isListAnswerFailure(error)) throw error;
            return { failure: listFailureOf(method, error) };
          },
        ),
      ),
    ]);
    const about = this.#about();
    const definitions: ServerDefinitions = {
      tools,
      ...(capabilities ? { capabilities } : {}),
      ...(about ? { about } : {}),
      era: this.eraVerdict,
    };
    const listFailures: ListFailures = {};
    declared.forEach(({ list }, index) => {
      const outcome = outcomes[index]!;
      if ('items' in outcome) Object.assign(definitions, { [list]: outcome.items });
      else listFailures[list] = outcome.failure;
    });
    return Object.keys(listFailures).length ? { ...definitions, listFailures } : definitions;
  }

  // SEP-2243: a client of a 2026-07-28 server over streamable HTTP must leave out a tool whose
  // x-mcp-header annotations break the rules (its calls could not be mirrored), and say so. Over
  // stdio (or in 2025) the annotations mean nothing and every tool stays.
  #callable(tools: Tool[]): Tool[] {
    if (!this.#modern || (this.#wire as { hasPerRequestStream?: boolean }).hasPerRequestStream !== true) return tools;
    return tools.filter((tool) => {
      const scan = scanParamHeaders(tool.inputSchema);
      if (!scan.valid)
        this.#logger.warn({ server: this.#server, tool: tool.name, reason: scan.reason }, 'tool left out: invalid x-mcp-header');
      return scan.valid;
    });
  }

  // serverInfo and instructions from the initialize result: the catalog's map of servers says
  // what each is for in the server's own words when it gave any.
  #about(): ServerAbout | undefined {
    const info = this.#client.getServerVersion();
    const given = { title: info?.title, description: info?.description, instructions: this.#client.getInstructions() };
    const about: ServerAbout = {};
    for (const key of ['title', 'description', 'instructions'] as const) {
      const text = given[key];
      if (typeof text === 'string' && text.trim() !== '') about[key] = text;
    }
    return Object.keys(about).length ? about : undefined;
  }

  // Every page of a list. Entries are checked for their identifying field only and passed on as
  // the server sent them: a parse would rebuild each one, with the checked field moved first.
  async #listAll<T>(method: string, key: string, idField: string, options: { signal?: AbortSignal }): Promise<T[]> {
    const cancellation = options.signal ? Cancellation.fromSignal(options.signal) : undefined;
    const items: T[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await this.request(method, cursor ? { cursor } : undefined, { cancellation });
      const entries = page[key];
      if (!isListOf(entries, idField))
        throw new MalformedListError(`a page of "${key}" whose entries do not all have a string "${idField}"`);
      if (page.nextCursor !== undefined && typeof page.nextCursor !== 'string')
        throw new MalformedListError(`a "nextCursor" that is not a string`);
      items.push(...(entries as T[]));
      cursor = page.nextCursor;
      // A server that repeats a cursor would otherwise loop forever.
      if (cursor !== undefined && seen.has(cursor)) break;
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor);
    return items;
  }

  /** A liveness probe. */
  async ping(timeoutMs: number): Promise<void> {
    await this.request('ping', undefined, { timeoutMs });
  }

  /** What the server declared in its handshake. */
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.#client.getServerCapabilities();
  }

  /** Give up on every request under way on this connection, each caller getting `reason`; the connection stays. */
  cancelRequests(reason: Error): void {
    this.#layer.cancelAll(reason);
  }

  /**
   * Ends the connection (stdio: stdin end, then SIGTERM, then SIGKILL; streamable HTTP: DELETE of
   * the session first, so the server can free it). Runs once.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      // Only the streamable HTTP transport has sessions to end (its class is imported lazily, so no instanceof).
      const transport = this.#wire as Transport & { terminateSession?: () => Promise<void> };
      if (typeof transport.terminateSession === 'function' && !this.#sessionLost) {
        // A server that does not answer the DELETE promptly is not waited for: close() aborts it.
        await settleWithin(transport.terminateSession(), SESSION_END_WAIT_MS);
      }
      this.#modern?.close();
      await this.#client.close();
    })().catch(() => undefined);
    return this.#closed;
  }

  async #failure(error: unknown): Promise<never> {
    if (this.#unconfirmed && isEraRefusal(error, 'request')) {
      throw new LoadoutError('ERA_STALE', `Server '${this.#server}' no longer speaks the 2026-07-28 era loadout remembered for it`, {
        cause: error,
      });
    }
    if (isSessionLost(error)) {
      this.#sessionLost = true;
      throw new LoadoutError('SESSION_LOST', `Server '${this.#server}' no longer knows loadout's session (it restarted)`, { cause: error });
    }
    if (await isAuthorizationFailure(error)) throw refusedCredentials(this.#server, this.#usesOAuth);
    // A child that died under a request: how it ended and its last stderr lines say why.
    const child = childOf(this.#wire);
    if (SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed && child?.exit) {
      const crash: ServerCrash = { exit: child.exit, stderr: child.stderrLines() };
      throw new SdkError(SdkErrorCode.ConnectionClosed, error.message, crash);
    }
    throw error;
  }

  #loseSession(): void {
    this.#sessionLost = true;
    void this.close();
  }
}
