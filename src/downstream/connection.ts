// One live MCP client connection to one downstream server, over stdio, SSE or streamable HTTP.
// It knows how to start, list tools (following pagination), forward a call and close; when to
// start or stop it is the pool's business. The SDK client and its transports are imported when a
// server first needs them (the HTTP/SSE clients pull in OAuth and EventSource code), so a warm
// start loads none of them.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type CreateMessageRequest,
  type ElicitRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { expandEnv, expandEnvRecord, transportOf, type ServerConfig } from '../config/index.js';
import { LoadoutError, errorMessage, isLoadoutError, lazySchemaValidator, type Cancellation, type Logger } from '../shared/index.js';
import { CallChannel } from './callChannel.js';
import { StoredOAuthProvider, needsAuthorizationError, oauthTargetOf } from './oauthProvider.js';

// What downstream servers send is parsed loosely and passed through untouched: the SDK's own
// strict Tool schema would strip fields a newer server adds, and re-validating every result
// costs time on the call path.
const LooseToolListSchema = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string() })),
  nextCursor: z.string().optional(),
});

// The SDK's default stdio read limit is 10 MB, and a bigger message closes the connection: a
// server returning a large (say 10 MB) result would look like a crash. Allow large results.
const MAX_STDIO_MESSAGE_BYTES = 256 * 1024 * 1024;

/** Identity loadout presents to downstream servers. */
export const CLIENT_INFO = { name: 'loadout', version: '0.1.0' } as const;

/** A request a downstream server makes of its client during a call (it needs a human or a model). */
export type RelayedRequest = CreateMessageRequest | ElicitRequest;

/**
 * The client session a forwarded call was made for: it answers the sampling and elicitation
 * requests the downstream makes while the call runs. `owner` identifies the session.
 */
export interface DownstreamCaller {
  readonly owner: object;
  relay(request: RelayedRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** Options for forwarding one call. */
export interface CallOptions {
  cancellation?: Cancellation;
  /** Called with each downstream progress notification's params. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Who answers sampling/elicitation requests made during this call. */
  caller?: DownstreamCaller;
}

/** Callbacks a connection reports to while open. */
export interface ConnectionHooks {
  /** Fires once when the connection ends for any reason (crash, remote close, or our own close()). */
  onClose?: () => void;
  /** The server said its tool list changed (`notifications/tools/list_changed`). */
  onToolListChanged?: () => void;
  /** Answer a sampling/elicitation request from the server; throw an McpError to refuse it. */
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
  readonly #client: Client;
  readonly #transport: Transport;
  readonly #timeoutMs: number;
  readonly #calls: CallChannel;
  #closed: Promise<void> | undefined;

  private constructor(client: Client, transport: Transport, timeoutMs: number) {
    this.#client = client;
    this.#transport = transport;
    this.#timeoutMs = timeoutMs;
    // A call reporting progress may run longer than one timeout, but not without end.
    this.#calls = new CallChannel(transport, { timeoutMs, maxTotalMs: timeoutMs * 10 });
  }

  /** Spawn or connect to `config` and complete the MCP handshake; `hooks` hear what the server does. */
  static async open(
    serverName: string,
    config: ServerConfig,
    options: { logger: Logger; env?: NodeJS.ProcessEnv; signal?: AbortSignal; timeoutMs?: number; oauthDir?: string } & ConnectionHooks,
  ): Promise<DownstreamConnection> {
    const env = options.env ?? process.env;
    const transport = await createTransport(serverName, config, { env, logger: options.logger, oauthDir: options.oauthDir });
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES, jsonSchemaValidator: lazySchemaValidator() });
    const relay = options.onRelayedRequest ?? refuseRelayedRequest;
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => relay(request, extra.signal));
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => relay(request, extra.signal));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolListChanged?.());
    let closedNotified = false;
    client.onclose = () => {
      if (closedNotified) return;
      closedNotified = true;
      options.onClose?.();
    };
    client.onerror = (error) => options.logger.debug({ err: errorMessage(error) }, 'downstream transport error');
    try {
      await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs ?? config.timeout_seconds * 1000 });
    } catch (error) {
      await transport.close().catch(() => undefined);
      if (await isAuthorizationFailure(error)) throw needsAuthorizationError(serverName);
      throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' failed to start: ${errorMessage(error)}`, { cause: error });
    }
    return new DownstreamConnection(client, transport, config.timeout_seconds * 1000);
  }

  /** The server's tools, all pages. */
  async listTools(options: { signal?: AbortSignal } = {}): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await this.#client.request(
        { method: 'tools/list', params: cursor ? { cursor } : {} },
        LooseToolListSchema,
        { signal: options.signal, timeout: this.#timeoutMs },
      );
      tools.push(...(page.tools as Tool[]));
      cursor = page.nextCursor;
      // A server that repeats a cursor would otherwise loop forever.
      if (cursor !== undefined && seen.has(cursor)) break;
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor);
    return tools;
  }

  /** Forward one tools/call and return the downstream result unchanged. */
  callTool(name: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<CallToolResult> {
    return this.#calls.call(name, args, options);
  }

  /** A liveness probe. */
  async ping(timeoutMs: number): Promise<void> {
    await this.#client.ping({ timeout: timeoutMs });
  }

  /** Whether the server declared `tools.listChanged`. */
  get emitsToolListChanged(): boolean {
    return this.#client.getServerCapabilities()?.tools?.listChanged === true;
  }

  /** The negotiated MCP protocol version. */
  get protocolVersion(): string | undefined {
    return (this.#transport as { protocolVersion?: string }).protocolVersion ?? undefined;
  }

  /** The underlying SDK client, for handlers that must answer downstream requests. */
  get client(): Client {
    return this.#client;
  }

  /**
   * Ends the connection (stdio: stdin end, then SIGTERM, then SIGKILL; streamable HTTP: DELETE of
   * the session first, so the server can free it). Runs once.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      // Only the streamable HTTP transport has sessions to end (its class is imported lazily, so no instanceof).
      const transport = this.#transport as Transport & { terminateSession?: () => Promise<void> };
      if (typeof transport.terminateSession === 'function') {
        // A server that does not answer the DELETE promptly is not waited for: close() aborts it.
        await settleWithin(transport.terminateSession(), SESSION_END_WAIT_MS);
      }
      await this.#client.close();
    })().catch(() => undefined);
    return this.#closed;
  }
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
  return Promise.reject(new McpError(ErrorCode.InvalidRequest, `loadout cannot answer ${request.method} here: no client session is waiting on this server`));
}

/**
 * Whether `error` means the server refused loadout's credentials and only a login can help: the
 * provider found nothing to refresh, the SDK gave up (UnauthorizedError), or a 401 came back
 * right after a refresh.
 */
export async function isAuthorizationFailure(error: unknown): Promise<boolean> {
  if (isLoadoutError(error, 'NEEDS_AUTHORIZATION')) return true;
  if (!(error instanceof Error)) return false;
  if ((error as { code?: unknown }).code === 401) return true;
  // Imported only on this failure path: the auth module is not needed to start.
  const { UnauthorizedError } = await import('@modelcontextprotocol/sdk/client/auth.js');
  return error instanceof UnauthorizedError;
}

interface TransportContext {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where OAuth files live; without it, HTTP servers get no OAuth. */
  oauthDir: string | undefined;
}

async function createTransport(serverName: string, config: ServerConfig, context: TransportContext): Promise<Transport> {
  try {
    return await createTransportOrThrow(serverName, config, context);
  } catch (error) {
    if (error instanceof LoadoutError) throw error;
    throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' has an unusable address: ${errorMessage(error)}`, { cause: error });
  }
}

async function createTransportOrThrow(serverName: string, config: ServerConfig, { env, logger, oauthDir }: TransportContext): Promise<Transport> {
  const where = `Server '${serverName}'`;
  const type = transportOf(config);
  if (type === 'stdio') {
    const { ChildProcessTransport } = await import('./childProcessTransport.js');
    const transport = new ChildProcessTransport({
      command: expandEnv(config.command!, env, `${where} command`),
      args: config.args.map((arg) => expandEnv(arg, env, `${where} args`)),
      // Servers expect the user's environment (PATH, HOME, npm settings), plus their own.
      env: { ...(env as Record<string, string>), ...expandEnvRecord(config.env, env, `${where} env`) },
      cwd: config.cwd === undefined ? undefined : expandEnv(config.cwd, env, `${where} cwd`),
      maxMessageBytes: MAX_STDIO_MESSAGE_BYTES,
    });
    // The child's stderr must be drained or a chatty server blocks; it is diagnostics only.
    transport.stderr.on('data', (chunk: Buffer) => logger.debug({ stderr: chunk.toString('utf8').trimEnd() }, 'downstream stderr'));
    return transport;
  }
  const url = new URL(expandEnv(config.url!, env, `${where} url`));
  const requestInit = { headers: expandEnvRecord(config.headers, env, `${where} headers`) };
  const oauth = oauthDir === undefined ? undefined : oauthTargetOf(serverName, config, env, oauthDir);
  const authProvider = oauth ? await StoredOAuthProvider.open(oauth) : undefined;
  if (type === 'sse') {
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    return new SSEClientTransport(url, { requestInit, authProvider });
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  return new StreamableHTTPClientTransport(url, { requestInit, authProvider });
}
