// One live MCP client connection to one downstream server, over stdio, SSE or streamable HTTP.
// It knows how to start, send a request (through its RequestLayer), list tools (following
// pagination) and close; when to start or stop it is the pool's business. The SDK client and its
// transports are imported when a server first needs them (the HTTP/SSE clients pull in OAuth and
// EventSource code), so a warm start loads none of them.
// Error classes come from the server package, which the gateway has loaded already: the client
// package is imported with the first connection (its errors match these across packages).
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type {
  Client,
  CreateMessageResult,
  ElicitResult,
  Transport,
  JSONRPCNotification,
  Prompt,
  Resource,
  ResourceTemplateType,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client';
import * as z from 'zod';
import { expandEnv, expandEnvRecord, oauthSettingsOf, type ServerConfig } from '../config/index.js';
import {
  Cancellation,
  LOADOUT_VERSION,
  LoadoutError,
  errorMessage,
  isLoadoutError,
  lazySchemaValidator,
  type Logger,
} from '../shared/index.js';
import type { RelayedRequest } from './inFlightCallers.js';
import { StoredOAuthProvider, needsAuthorizationError, oauthTargetOf } from './oauthProvider.js';
import { RequestLayer, type RequestOptions } from './requestLayer.js';

// What downstream servers send is parsed loosely and passed through untouched: the SDK's own
// strict Tool schema would strip fields a newer server adds, and re-validating every result
// costs time on the call path.
const LoosePageSchema = z.looseObject({ nextCursor: z.string().optional() });

/** Everything a server lists, for the catalog; lists the server did not declare are left out. */
export interface ServerDefinitions {
  tools: Tool[];
  prompts?: Prompt[];
  resources?: Resource[];
  resourceTemplates?: ResourceTemplateType[];
  capabilities?: ServerCapabilities;
}

// The SDK's default stdio read limit is 10 MB, and a bigger message closes the connection: a
// server returning a large (say 10 MB) result would look like a crash. Allow large results.
const MAX_STDIO_MESSAGE_BYTES = 256 * 1024 * 1024;

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

// Declared so servers may ask for sampling and elicitation; loadout relays each request to the
// client session that made the call, or refuses it with a clear error. Roots are not declared:
// they belong to one client, and a shared downstream cannot be told whose.
const SESSION_END_WAIT_MS = 2000;

/** Capabilities loadout declares to downstream servers (requests are relayed to the calling client). */
export const CLIENT_CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} } };

/** A started client connection to one downstream server. */
export class DownstreamConnection {
  readonly #server: string;
  readonly #client: Client;
  readonly #layer: RequestLayer;
  /** Whether a refused credential means an OAuth login (else the server's own headers are wrong). */
  readonly #usesOAuth: boolean;
  /** The server no longer knows this connection's session (it restarted): there is nothing to end. */
  #sessionLost = false;
  #closed: Promise<void> | undefined;

  private constructor(server: string, client: Client, layer: RequestLayer, usesOAuth: boolean) {
    this.#server = server;
    this.#usesOAuth = usesOAuth;
    this.#client = client;
    this.#layer = layer;
  }

  /** Spawn or connect to `config` and complete the MCP handshake; `hooks` hear what the server does. */
  static async open(
    serverName: string,
    config: ServerConfig,
    // shutdown: aborted when loadout stops; a stdio child is then ended within about a second.
    options: {
      logger: Logger;
      env?: NodeJS.ProcessEnv;
      signal?: AbortSignal;
      shutdown?: AbortSignal;
      timeoutMs?: number;
      oauthDir?: string;
    } & ConnectionHooks,
  ): Promise<DownstreamConnection> {
    const env = options.env ?? process.env;
    const transport = await createTransport(serverName, config, {
      env,
      logger: options.logger,
      oauthDir: options.oauthDir,
      shutdown: options.shutdown,
    });
    const usesOAuth = options.oauthDir !== undefined && oauthSettingsOf(config) !== undefined;
    const layer = new RequestLayer(transport, config.timeout_seconds * 1000, { onNotification: options.onNotification });
    const { Client } = await import('@modelcontextprotocol/client');
    const client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES, jsonSchemaValidator: lazySchemaValidator() });
    const relay = options.onRelayedRequest ?? refuseRelayedRequest;
    // The upstream client's answer goes back as it came; the Client checks it against the method's result schema.
    client.setRequestHandler('sampling/createMessage', (request, ctx) => relay(request, ctx.mcpReq.signal) as Promise<CreateMessageResult>);
    client.setRequestHandler('elicitation/create', (request, ctx) => relay(request, ctx.mcpReq.signal) as Promise<ElicitResult>);
    let closedNotified = false;
    client.onclose = () => {
      if (closedNotified) return;
      closedNotified = true;
      options.onClose?.();
    };
    let connection: DownstreamConnection | undefined;
    client.onerror = (error) => {
      options.logger.debug({ err: errorMessage(error) }, 'downstream transport error');
      // A dropped SSE stream cannot be resumed (its EventSource would reconnect to a new session
      // that was never initialized): end the connection so the next use starts a fresh one. A
      // streamable-HTTP session is checked by the next request instead (its 404 is retried).
      if (connection && isSseStreamError(error)) connection.#loseSession();
    };
    try {
      await client.connect(layer, { signal: options.signal, timeout: options.timeoutMs ?? config.timeout_seconds * 1000 });
    } catch (error) {
      await layer.close().catch(() => undefined);
      if (await isAuthorizationFailure(error)) throw refusedCredentials(serverName, usesOAuth);
      throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' failed to start: ${errorMessage(error)}`, { cause: error });
    }
    connection = new DownstreamConnection(serverName, client, layer, usesOAuth);
    return connection;
  }

  /**
   * Send one request and return the server's result object unchanged (see RequestLayer). A
   * server that answers 404 to the session (it restarted) fails it with SESSION_LOST, which
   * means it was not processed; one that wants a new login fails it with NEEDS_AUTHORIZATION.
   */
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<Record<string, unknown>> {
    return this.#layer.request(method, params, options).catch((error: unknown) => this.#failure(error));
  }

  /** The server's tools, all pages. */
  listTools(options: { signal?: AbortSignal } = {}): Promise<Tool[]> {
    return this.#listAll<Tool>('tools/list', 'tools', 'name', options);
  }

  /** Tools, and the prompts, resources and resource templates the server declared, all pages. */
  async listDefinitions(options: { signal?: AbortSignal } = {}): Promise<ServerDefinitions> {
    const capabilities = this.serverCapabilities;
    const [tools, prompts, resources, resourceTemplates] = await Promise.all([
      this.listTools(options),
      capabilities?.prompts ? this.#listAll<Prompt>('prompts/list', 'prompts', 'name', options) : undefined,
      capabilities?.resources ? this.#listAll<Resource>('resources/list', 'resources', 'uri', options) : undefined,
      capabilities?.resources
        ? this.#listAll<ResourceTemplateType>('resources/templates/list', 'resourceTemplates', 'uriTemplate', options)
        : undefined,
    ]);
    return { tools, prompts, resources, resourceTemplates, ...(capabilities ? { capabilities } : {}) };
  }

  // Every page of a list; entries are checked for their identifying field only and passed on untouched.
  async #listAll<T>(method: string, key: string, idField: string, options: { signal?: AbortSignal }): Promise<T[]> {
    const schema = LoosePageSchema.extend({ [key]: z.array(z.looseObject({ [idField]: z.string() })) });
    const cancellation = options.signal ? Cancellation.fromSignal(options.signal) : undefined;
    const items: T[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = schema.parse(await this.request(method, cursor ? { cursor } : undefined, { cancellation }));
      items.push(...(page[key] as T[]));
      cursor = page.nextCursor as string | undefined;
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

  /** Whether the server declared `tools.listChanged`. */
  get emitsToolListChanged(): boolean {
    return this.serverCapabilities?.tools?.listChanged === true;
  }

  /** The negotiated MCP protocol version. */
  get protocolVersion(): string | undefined {
    return (this.#layer.inner as { protocolVersion?: string }).protocolVersion ?? undefined;
  }

  /**
   * Ends the connection (stdio: stdin end, then SIGTERM, then SIGKILL; streamable HTTP: DELETE of
   * the session first, so the server can free it). Runs once.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      // Only the streamable HTTP transport has sessions to end (its class is imported lazily, so no instanceof).
      const transport = this.#layer.inner as Transport & { terminateSession?: () => Promise<void> };
      if (typeof transport.terminateSession === 'function' && !this.#sessionLost) {
        // A server that does not answer the DELETE promptly is not waited for: close() aborts it.
        await settleWithin(transport.terminateSession(), SESSION_END_WAIT_MS);
      }
      await this.#client.close();
    })().catch(() => undefined);
    return this.#closed;
  }

  async #failure(error: unknown): Promise<never> {
    if (isSessionLost(error)) {
      this.#sessionLost = true;
      throw new LoadoutError('SESSION_LOST', `Server '${this.#server}' no longer knows loadout's session (it restarted)`, { cause: error });
    }
    if (await isAuthorizationFailure(error)) throw refusedCredentials(this.#server, this.#usesOAuth);
    throw error;
  }

  #loseSession(): void {
    this.#sessionLost = true;
    void this.close();
  }
}

// A POST the server answered 404 for the session id: streamable HTTP (SdkHttpError, status 404)
// or an SSE message endpoint that no longer exists. The server did not process it.
function isSessionLost(error: unknown): boolean {
  // A JSON-RPC error the server sent may carry any code, 404 too: it is an answer, not a lost session.
  if (!(error instanceof Error) || ProtocolError.isInstance(error)) return false;
  return httpStatusOf(error) === 404 || /^Error POSTing to endpoint \(HTTP 404\)/.test(error.message);
}

// The HTTP status of a transport failure: SdkHttpError carries it as `status`, SseError as `code`.
function httpStatusOf(error: Error): unknown {
  const { status, code } = error as { status?: unknown; code?: unknown };
  return status ?? code;
}

// The SSE transport's EventSource failed (SseError; its class is imported lazily, so no instanceof).
function isSseStreamError(error: Error): boolean {
  return error.message.startsWith('SSE error:');
}

// Wait for `promise` to settle, but no longer than `ms`; its outcome does not matter.
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([promise.then(undefined, () => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function refuseRelayedRequest(request: RelayedRequest): Promise<never> {
  return Promise.reject(
    new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `loadout cannot answer ${request.method} here: no client session is waiting on this server`,
    ),
  );
}

// A 401 from a server loadout logs in to needs `loadout auth`; from one that sends its own
// Authorization header (or has `oauth: false`), a login cannot help: the header is what to fix.
function refusedCredentials(server: string, usesOAuth: boolean): LoadoutError {
  if (usesOAuth) return needsAuthorizationError(server);
  return new LoadoutError(
    'AUTH_FAILED',
    `Server '${server}' refused loadout's credentials (HTTP 401): check the Authorization header under headers: for ${server} in servers.yaml`,
  );
}

/**
 * Whether `error` means the server refused loadout's credentials and only a login can help: the
 * provider found nothing to refresh, the SDK gave up (UnauthorizedError), or a 401 came back
 * right after a refresh.
 */
export async function isAuthorizationFailure(error: unknown): Promise<boolean> {
  if (isLoadoutError(error, 'NEEDS_AUTHORIZATION')) return true;
  if (!(error instanceof Error)) return false;
  if (httpStatusOf(error) === 401) return true;
  // Imported only on this failure path: the auth module is not needed to start.
  const { UnauthorizedError } = await import('@modelcontextprotocol/client');
  return error instanceof UnauthorizedError;
}

interface TransportContext {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where OAuth files live; without it, HTTP servers get no OAuth. */
  oauthDir: string | undefined;
  /** Aborted when loadout stops: a stdio child is then ended in a hurry. */
  shutdown?: AbortSignal;
}

async function createTransport(serverName: string, config: ServerConfig, context: TransportContext): Promise<Transport> {
  try {
    return await createTransportOrThrow(serverName, config, context);
  } catch (error) {
    if (error instanceof LoadoutError) throw error;
    throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' has an unusable address: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

async function createTransportOrThrow(
  serverName: string,
  config: ServerConfig,
  { env, logger, oauthDir, shutdown }: TransportContext,
): Promise<Transport> {
  const where = `Server '${serverName}'`;
  const { type } = config;
  if (type === 'stdio') {
    const { ChildProcessTransport } = await import('./childProcessTransport.js');
    const transport = new ChildProcessTransport({
      command: expandEnv(config.command, env, `${where} command`),
      args: config.args.map((arg) => expandEnv(arg, env, `${where} args`)),
      // Servers expect the user's environment (PATH, HOME, npm settings), plus their own.
      env: { ...(env as Record<string, string>), ...expandEnvRecord(config.env, env, `${where} env`) },
      cwd: config.cwd === undefined ? undefined : expandEnv(config.cwd, env, `${where} cwd`),
      maxMessageBytes: MAX_STDIO_MESSAGE_BYTES,
      hurry: shutdown,
    });
    // The child's stderr must be drained or a chatty server blocks; it is diagnostics only.
    transport.stderr.on('data', (chunk: Buffer) => logger.debug({ stderr: chunk.toString('utf8').trimEnd() }, 'downstream stderr'));
    return transport;
  }
  const url = new URL(expandEnv(config.url, env, `${where} url`));
  const requestInit = { headers: expandEnvRecord(config.headers, env, `${where} headers`) };
  const oauth = oauthDir === undefined ? undefined : oauthTargetOf(serverName, config, env, oauthDir);
  const authProvider = oauth ? await StoredOAuthProvider.open(oauth) : undefined;
  const options = authProvider ? { requestInit, authProvider, fetch: authProvider.fetch } : { requestInit };
  if (type === 'sse') {
    const { SSEClientTransport } = await import('@modelcontextprotocol/client');
    return new SSEClientTransport(url, options);
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  return new StreamableHTTPClientTransport(url, options);
}
