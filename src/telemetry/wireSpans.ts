// The spans and operation metrics of the MCP conventions, taken where messages cross loadout's
// edges: ServerSpans wraps a client's transport (a SERVER span from each request's arrival to its
// answer), ClientSpans a downstream server's (a CLIENT span from each request loadout sends to its
// answer, its context written into the request's `_meta`). Loaded with the SDK, only when telemetry is on.
import { propagation, trace, SpanKind, TraceFlags, type Attributes, type Context, type SpanContext } from '@opentelemetry/api';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../shared/index.js';
import { ATTR, LOADOUT_ATTR } from './names.js';
import type { Instruments, OpenRequest } from './instruments.js';
import { answerFacts, incomingContext, metaOf, type HeaderReader } from './requestFacts.js';
import { protocolVersionLabel, type Failure, type Meta, type RequestShape, type RequestShapes } from './requestShapes.js';
import type { DownstreamPeer, ServerWire, TracedSendOptions } from './telemetry.js';

const CANCELLED: Failure = { errorType: 'cancelled', message: 'cancelled' };
const CLIENT_GONE: Failure = { errorType: 'connection_closed', message: 'the client went away' };
const SERVER_GONE: Failure = { errorType: 'connection_closed', message: 'the server connection closed' };

/** A client's transport: one SERVER span per request loadout answers. */
export class ServerSpans extends TransportDecorator {
  readonly #instruments: Instruments;
  readonly #wire: Attributes;
  readonly #client: Attributes | undefined;
  readonly #hidden: ServerWire['hidden'];
  readonly #open = new Map<RequestId, OpenRequest>();
  readonly #startedMs = performance.now();
  #protocolVersion: string | undefined;
  #shapes: RequestShapes;

  constructor(inner: Transport, wire: ServerWire, instruments: Instruments) {
    super(inner);
    this.#instruments = instruments;
    this.#wire = { [ATTR.networkTransport]: wire.transport, ...(wire.protocol && { [ATTR.networkProtocolName]: wire.protocol }) };
    this.#client = wire.client && clientAttributes(wire.client);
    this.#hidden = wire.hidden;
    this.#shapes = this.#shapesNow();
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (!('method' in message)) return this.onmessage?.(message, extra);
    if (!('id' in message)) {
      if (message.method === 'notifications/cancelled') this.#end(message.params?.requestId as RequestId, CANCELLED);
      return this.onmessage?.(message, extra);
    }
    const meta = metaOf(message.params);
    const version = meta?.[PROTOCOL_VERSION_META_KEY] ?? (message.method === 'initialize' ? message.params?.protocolVersion : undefined);
    const label = typeof version === 'string' ? protocolVersionLabel(version) : undefined;
    if (label !== undefined && label !== this.#protocolVersion) this.#useVersion(label);
    const instruments = this.#instruments;
    const shape = this.#shapes.of(message.method, message.params);
    if (!instruments.tracing) {
      this.#open.set(message.id, instruments.startRequest(SpanKind.SERVER, shape));
      return this.onmessage?.(message, extra);
    }
    const headers = extra?.request?.headers;
    const { open, within } = startTracedRequest(instruments, shape, {
      id: message.id,
      meta,
      ...(headers && { header: (name: string) => headers.get(name) ?? undefined }),
      sessionId: this.inner.sessionId,
      client: this.#client,
    });
    this.#open.set(message.id, open);
    // No context is entered here: a call the session forwards carries this one by hand, and the
    // session enters it for a request its Server answers (resume), which the SDK's 2026-07-28 stdio
    // entry may hand on later, from a queue.
    instruments.arrived(message, within);
    this.onmessage?.(message, extra);
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (('result' in message || 'error' in message) && message.id !== undefined) this.#end(message.id, answerFacts(message));
    return this.inner.send(message, options);
  }

  override setProtocolVersion(version: string): void {
    if (version !== this.#protocolVersion) this.#useVersion(version);
    super.setProtocolVersion(version);
  }

  protected innerClosed(): void {
    for (const id of [...this.#open.keys()]) this.#end(id, CLIENT_GONE);
    this.#instruments.serverSession.record((performance.now() - this.#startedMs) / 1000, wireBase(this.#wire, this.#protocolVersion));
  }

  #useVersion(version: string): void {
    this.#protocolVersion = version;
    this.#shapes = this.#shapesNow();
  }

  #shapesNow(): RequestShapes {
    return this.#instruments.shapes(wireBase(this.#wire, this.#protocolVersion), this.#instruments.clientNames);
  }

  #end(id: RequestId | undefined, failure: Failure | undefined): void {
    const open = id === undefined ? undefined : this.#open.get(id);
    if (!open) return;
    this.#open.delete(id!);
    this.#instruments.endRequest(open, failure, this.#instruments.serverOperation, this.#hidden);
  }
}

/** A downstream server's transport: one CLIENT span per request loadout sends, its context in `_meta`. */
export class ClientSpans extends TransportDecorator {
  readonly #instruments: Instruments;
  readonly #peer: DownstreamPeer;
  readonly #wire: Attributes;
  readonly #open = new Map<RequestId, OpenRequest>();
  readonly #startedMs = performance.now();
  #protocolVersion: string | undefined;
  #shapes: RequestShapes;
  #closing = false;

  constructor(inner: Transport, peer: DownstreamPeer, instruments: Instruments) {
    super(inner);
    this.#instruments = instruments;
    this.#peer = peer;
    this.#wire = peerAttributes(peer);
    this.#shapes = instruments.shapes(this.#wire);
    // What the request layer and the SDK read off a stdio or modern HTTP transport shows through.
    for (const key of ['stderr', 'pid', 'hasPerRequestStream'])
      if (key in inner) Object.defineProperty(this, key, { get: () => (inner as unknown as Meta)[key] });
    instruments.downstreamOpened(peer.serverName);
  }

  override send(message: JSONRPCMessage, options?: TracedSendOptions): Promise<void> {
    if (!('method' in message) || !('id' in message)) return this.inner.send(message, options);
    const instruments = this.#instruments;
    const shape = this.#shapes.of(message.method, message.params);
    if (!instruments.tracing) {
      this.#open.set(message.id, instruments.startRequest(SpanKind.CLIENT, shape));
      return this.inner.send(message, options);
    }
    // A forwarded call brings the context of the client's request (RequestTrace is that Context, opaque to the layers it crosses);
    // anything else is sent in the context entered for the request being answered, or starts a trace of its own.
    const carried = options?.requestTrace as unknown as Context | undefined;
    const parent = carried ?? instruments.sendingContext();
    // Under a client request that was not sampled, no span: every sampler loadout can be given
    // decides so for the whole trace (by its parent, or by the trace id), so this one would not be
    // sampled either. The downstream server is still told the trace and that it is not sampled.
    const unsampled = carried !== undefined && !isSampled(trace.getSpanContext(carried));
    const open = instruments.startRequest(SpanKind.CLIENT, shape, parent, undefined, !unsampled);
    this.#open.set(message.id, open);
    if (!open.span && !unsampled) return this.inner.send(message, options);
    if (open.span?.isRecording()) open.span.setAttribute(ATTR.requestId, String(message.id));
    const meta: Meta = { ...metaOf(message.params) };
    if (open.span) propagation.inject(trace.setSpan(parent, open.span), meta);
    else carryUnsampled(parent, meta);
    return this.inner.send({ ...message, params: { ...message.params, _meta: meta } }, options);
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (('result' in message || 'error' in message) && message.id !== undefined) this.#end(message.id, answerFacts(message));
    this.onmessage?.(message, extra);
  }

  override setProtocolVersion(version: string): void {
    if (version !== this.#protocolVersion) {
      this.#protocolVersion = version;
      this.#shapes = this.#instruments.shapes(wireBase(this.#wire, version));
    }
    super.setProtocolVersion(version);
  }

  override close(): Promise<void> {
    this.#closing = true;
    return super.close();
  }

  protected innerClosed(): void {
    for (const id of [...this.#open.keys()]) this.#end(id, SERVER_GONE);
    this.#instruments.clientSession.record((performance.now() - this.#startedMs) / 1000, wireBase(this.#wire, this.#protocolVersion));
    this.#instruments.downstreamClosed(this.#peer.serverName, !this.#closing);
  }

  #end(id: RequestId, failure: Failure | undefined): void {
    const open = this.#open.get(id);
    if (!open) return;
    this.#open.delete(id);
    this.#instruments.endRequest(open, failure, this.#instruments.clientOperation);
    if (open.shape.attributes[ATTR.methodName] === 'tools/call') this.#instruments.toolCalled(open.shape, failure);
  }
}

/** What a SERVER span starts from: the request's id and `_meta`, its HTTP headers, and what is known of its connection. */
export interface ServerArrival {
  readonly id: RequestId;
  readonly meta: Meta | undefined;
  /** One of its HTTP request's headers (traceparent, tracestate, baggage), when it came over HTTP. */
  readonly header?: HeaderReader;
  readonly sessionId?: string | undefined;
  /** clientAttributes of where it came from. */
  readonly client?: Attributes | undefined;
}

/**
 * A request loadout answers, as it arrives while traces are on: its SERVER span and clock, and the
 * context its handling runs in, so what it sends downstream joins its trace.
 */
export function startTracedRequest(
  instruments: Instruments,
  shape: RequestShape,
  arrival: ServerArrival,
): { open: OpenRequest; within: Context } {
  const { parent, links } = incomingContext(arrival.meta, arrival.header);
  const open = instruments.startRequest(SpanKind.SERVER, shape, parent, links);
  const span = open.span!;
  if (span.isRecording()) {
    span.setAttribute(ATTR.requestId, String(arrival.id));
    if (arrival.sessionId) span.setAttribute(ATTR.sessionId, arrival.sessionId);
    if (arrival.client) span.setAttributes(arrival.client);
  }
  return { open, within: trace.setSpan(parent, span) };
}

// An unsampled trace's context into a downstream request's `_meta`. With no trace state and no
// baggage, what the propagators loadout registers (W3C trace context and baggage) would write is the
// traceparent alone, written here directly: going through the propagators was about a third of what
// tracing cost an unsampled call.
function carryUnsampled(parent: Context, meta: Meta): void {
  const span = trace.getSpanContext(parent);
  if (
    span === undefined ||
    span.traceState !== undefined ||
    propagation.getBaggage(parent) !== undefined ||
    !trace.isSpanContextValid(span)
  )
    return propagation.inject(parent, meta);
  meta.traceparent = `00-${span.traceId}-${span.spanId}-00`;
}

function isSampled(span: SpanContext | undefined): boolean {
  return span !== undefined && (span.traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** A wire's attributes with the protocol version it speaks, once it is known: what its requests and sessions are measured under. */
export function wireBase(wire: Attributes, protocolVersion: string | undefined): Attributes {
  return protocolVersion === undefined ? wire : { ...wire, [ATTR.protocolVersion]: protocolVersion };
}

/** Where a client connects from (client.address, client.port): span attributes, never a metric's. */
export function clientAttributes(client: { readonly address?: string; readonly port?: number }): Attributes | undefined {
  if (!client.address) return undefined;
  return { [ATTR.clientAddress]: client.address, ...(client.port !== undefined && { [ATTR.clientPort]: client.port }) };
}

// A downstream server's name, and where it is: a child's pipe, or an HTTP host and port.
function peerAttributes(peer: DownstreamPeer): Attributes {
  const attributes: Attributes = { [LOADOUT_ATTR.serverName]: peer.serverName, [ATTR.networkTransport]: peer.url ? 'tcp' : 'pipe' };
  if (!peer.url) return attributes;
  const url = URL.canParse(peer.url) ? new URL(peer.url) : undefined;
  if (!url) return attributes;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { ...attributes, [ATTR.networkProtocolName]: 'http', [ATTR.serverAddress]: url.hostname, [ATTR.serverPort]: port };
}
