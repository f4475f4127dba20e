// What a connection does differently for a modern (2026-07-28) server, so the layers above keep
// asking in 2025 terms: a server that wants input mid-request answers `input_required` (MRTR),
// which is fulfilled through the calling client (roots too, as the request says whose) and
// retried; change notices come on one `subscriptions/listen` stream, which resources/subscribe and
// unsubscribe reshape; the log level a client sets travels in each request's envelope; a liveness
// check is `server/discover`.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/server';
import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type {
  Client,
  ClientCapabilities,
  Implementation,
  McpSubscription,
  ServerCapabilities,
  SubscriptionFilter,
} from '@modelcontextprotocol/client';
import { errorMessage, type Logger } from '../shared/index.js';
import type { RelayedRequest } from './inFlightCallers.js';
import type { Envelope, RequestLayer, RequestOptions } from './requestLayer.js';

/** Rounds of input a request may ask for before loadout gives up on it (the SDK's own bound). */
export const MAX_INPUT_ROUNDS = 8;

// A dropped listen stream (an HTTP server restarting) is opened again after this, doubling to the cap.
const RELISTEN_BASE_MS = 500;
const RELISTEN_MAX_MS = 30_000;

// The methods whose answer may be `input_required`.
const MULTI_ROUND_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

type Relay = (request: RelayedRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;

/** Dependencies of a modern server's requests. */
export interface ModernRequestsOptions {
  server: string;
  client: Client;
  layer: RequestLayer;
  /** Who loadout is, as each request's envelope says. */
  clientInfo: Implementation;
  capabilities: ClientCapabilities;
  /** Answers the server's input requests when the request has no caller of its own. */
  relay: Relay;
  logger: Logger;
}

/** The requests of one connection to a modern server, and its listen stream. */
export class ModernRequests {
  readonly #options: ModernRequestsOptions;
  readonly #envelope: Envelope['fixed'];
  readonly #resourceUris = new Set<string>();
  #subscription: McpSubscription | undefined;
  /** The latest listen change; each waits for the one before, so streams are replaced in order. */
  #listening: Promise<void> = Promise.resolve();
  #relistenDelayMs = RELISTEN_BASE_MS;
  #relistenTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: ModernRequestsOptions) {
    this.#options = options;
    // What the SDK Client attaches to its own requests (the listen stream's).
    this.#envelope = {
      [PROTOCOL_VERSION_META_KEY]: options.client.getNegotiatedProtocolVersion(),
      [CLIENT_INFO_META_KEY]: options.clientInfo,
      [CLIENT_CAPABILITIES_META_KEY]: options.capabilities,
    };
    options.layer.setEnvelope({ fixed: this.#envelope });
  }

  /**
   * Open the listen stream for the list changes the server declared, and say whether one opened
   * (the server answered in the modern era). Its refusal is thrown (a server remembered as modern
   * that refuses it speaks 2025 now); a later drop is retried.
   */
  async start(): Promise<boolean> {
    const filter = this.#filter();
    if (!Object.keys(filter).length) return false;
    this.#adopt(await this.#options.client.listen(filter));
    return true;
  }

  /** Open the stream later (its first opening failed for a reason other than the era). */
  retryListen(reason: string): void {
    this.#scheduleRelisten(reason);
  }

  /** Send `method` as the modern era has it (see the file comment); results come back as a 2025 server's would. */
  request(method: string, params: Record<string, unknown> | undefined, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    switch (method) {
      case 'ping':
        return this.#options.layer.request('server/discover', undefined, options).then(() => ({}));
      case 'logging/setLevel': {
        const level = typeof params?.level === 'string' ? params.level : undefined;
        this.#options.layer.setEnvelope({ fixed: this.#envelope, ...(level ? { defaults: { [LOG_LEVEL_META_KEY]: level } } : {}) });
        return Promise.resolve({});
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const uri = params?.uri;
        if (typeof uri !== 'string') return Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidParams, `${method} needs a uri`));
        if (method === 'resources/subscribe' && !this.#options.client.getServerCapabilities()?.resources?.subscribe)
          return Promise.reject(
            new ProtocolError(ProtocolErrorCode.MethodNotFound, `Server '${this.#options.server}' does not offer resource subscriptions`),
          );
        const had = this.#resourceUris.has(uri);
        if (method === 'resources/subscribe') this.#resourceUris.add(uri);
        else this.#resourceUris.delete(uri);
        return had === this.#resourceUris.has(uri) ? Promise.resolve({}) : this.#relisten().then(() => ({}));
      }
      default:
        return MULTI_ROUND_METHODS.has(method)
          ? this.#withInput(method, params, options)
          : this.#options.layer.request(method, params, options);
    }
  }

  /** Stop listening. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#relistenTimer);
    void this.#subscription?.close().catch(() => undefined);
  }

  // Send the request; while the server answers input_required, get each input from the client and
  // send it again with the answers and the server's requestState, byte for byte.
  async #withInput(method: string, params: Record<string, unknown> | undefined, options: RequestOptions): Promise<Record<string, unknown>> {
    const { layer, server } = this.#options;
    let sent = params;
    for (let round = 0; ; round++) {
      const result = await layer.request(method, sent, options);
      if (result.resultType !== 'input_required') return result;
      if (round === MAX_INPUT_ROUNDS)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `Server '${server}' still asked for input after ${MAX_INPUT_ROUNDS} rounds of ${method}; loadout gave up`,
        );
      const inputResponses = await this.#fulfil(result.inputRequests, options);
      const { requestState } = result;
      sent = { ...params, inputResponses, ...(typeof requestState === 'string' ? { requestState } : {}) };
    }
  }

  // One answer per input request, asked of the client that made the request: in one round when it
  // can (a 2026-07-28 client's InputRequiredResult), else one after another (a person answers them).
  async #fulfil(inputRequests: unknown, options: RequestOptions): Promise<Record<string, unknown>> {
    const { server, relay } = this.#options;
    const { caller } = options;
    const requests = new Map<string, RelayedRequest>();
    for (const [key, request] of typeof inputRequests === 'object' && inputRequests !== null ? Object.entries(inputRequests) : []) {
      const { method } = (request ?? {}) as { method?: unknown };
      if (method !== 'elicitation/create' && method !== 'sampling/createMessage' && method !== 'roots/list')
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `Server '${server}' asked for ${String(method)} input, which loadout does not relay (only elicitation, sampling and roots)`,
        );
      // Roots are one client's: without the request's own caller, guessing a session would leak them.
      if (method === 'roots/list' && !caller)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `Server '${server}' asked for roots during a request no client made, so there are no roots to give it`,
        );
      requests.set(key, request as RelayedRequest);
    }
    const signal = options.cancellation?.signal ?? new AbortController().signal;
    if (caller?.relayRound) return caller.relayRound(requests, signal);
    const responses: Record<string, unknown> = {};
    for (const [key, request] of requests) responses[key] = await (caller ? caller.relay(request, signal) : relay(request, signal));
    return responses;
  }

  // The filter the stream should have now: what the server declared, and the subscribed resources.
  #filter(): SubscriptionFilter {
    const capabilities: ServerCapabilities = this.#options.client.getServerCapabilities() ?? {};
    const filter: SubscriptionFilter = {};
    if (capabilities.tools?.listChanged) filter.toolsListChanged = true;
    if (capabilities.prompts?.listChanged) filter.promptsListChanged = true;
    if (capabilities.resources?.listChanged) filter.resourcesListChanged = true;
    if (this.#resourceUris.size && capabilities.resources?.subscribe) filter.resourceSubscriptions = [...this.#resourceUris];
    return filter;
  }

  // Replace the listen stream with one for the current filter (the new one first, so no notice falls between).
  #relisten(): Promise<void> {
    this.#listening = this.#listening.then(() => this.#replaceStream());
    return this.#listening;
  }

  async #replaceStream(): Promise<void> {
    if (this.#closed) return;
    const previous = this.#subscription;
    const filter = this.#filter();
    if (!Object.keys(filter).length) {
      this.#subscription = undefined;
      await previous?.close().catch(() => undefined);
      return;
    }
    try {
      this.#adopt(await this.#options.client.listen(filter));
    } catch (error) {
      this.#scheduleRelisten(errorMessage(error));
    }
    await previous?.close().catch(() => undefined);
  }

  #adopt(subscription: McpSubscription): void {
    this.#subscription = subscription;
    this.#relistenDelayMs = RELISTEN_BASE_MS;
    void subscription.closed.then((how) => {
      if (how !== 'local' && this.#subscription === subscription) this.#scheduleRelisten(`the server ended it (${how})`);
    });
  }

  #scheduleRelisten(reason: string): void {
    if (this.#closed || this.#relistenTimer) return;
    this.#options.logger.debug({ reason, delayMs: this.#relistenDelayMs }, 'listen stream lost; opening it again');
    this.#relistenTimer = setTimeout(() => {
      this.#relistenTimer = undefined;
      void this.#relisten();
    }, this.#relistenDelayMs);
    this.#relistenTimer.unref();
    this.#relistenDelayMs = Math.min(this.#relistenDelayMs * 2, RELISTEN_MAX_MS);
  }
}

/**
 * A notification as the layers above know it: a listen stream's acknowledgement is the stream's
 * own business (undefined), and its subscription id means nothing to them.
 */
export function fromListen(notification: JSONRPCNotification): JSONRPCNotification | undefined {
  if (notification.method === 'notifications/subscriptions/acknowledged') return undefined;
  const meta = notification.params?._meta;
  if (!meta || !(SUBSCRIPTION_ID_META_KEY in meta)) return notification;
  const { [SUBSCRIPTION_ID_META_KEY]: _id, ...rest } = meta;
  const { _meta: _old, ...params } = notification.params!;
  return { ...notification, params: Object.keys(rest).length ? { ...params, _meta: rest } : params };
}
