// The spans and operation metrics of the MCP conventions, taken where messages cross loadout's
// edges: ServerSpans wraps a client's transport (a SERVER span from each request's arrival to its
// answer), ClientSpans a downstream server's (a CLIENT span from each request loadout sends to its
// answer, its context written into the request's `_meta`). Loaded with the SDK, only when telemetry is on.
import { context, propagation, trace, SpanKind, type Attributes } from '@opentelemetry/api';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../shared/index.js';
import { ATTR, LOADOUT_ATTR } from './names.js';
import type { Instruments } from './instruments.js';
import { answerFacts, finish, metaOf, metricAttributes, requestFacts, type Meta, type OpenRequest } from './requestFacts.js';
import type { DownstreamPeer, ServerWire } from './telemetry.js';

/** A client's transport: one SERVER span per request loadout answers. */
export class ServerSpans extends TransportDecorator {
  readonly #instruments: Instruments;
  readonly #wire: Attributes;
  readonly #open = new Map<RequestId, OpenRequest>();
  readonly #startedMs = performance.now();
  #protocolVersion: string | undefined;

  constructor(inner: Transport, wire: ServerWire, instruments: Instruments) {
    super(inner);
    this.#instruments = instruments;
    this.#wire = { [ATTR.networkTransport]: wire.transport, ...(wire.protocol && { [ATTR.networkProtocolName]: wire.protocol }) };
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (!('method' in message)) return this.onmessage?.(message, extra);
    if (!('id' in message)) {
      if (message.method === 'notifications/cancelled')
        this.#end(message.params?.requestId as RequestId, { [ATTR.errorType]: 'cancelled' }, 'cancelled');
      return this.onmessage?.(message, extra);
    }
    const meta = metaOf(message.params);
    const version = meta?.[PROTOCOL_VERSION_META_KEY] ?? (message.method === 'initialize' ? message.params?.protocolVersion : undefined);
    if (typeof version === 'string') this.#protocolVersion = version;
    const started = this.#instruments.serverRequest(message, this.#attributes(), meta, extra?.request?.headers);
    this.#open.set(message.id, started.open);
    context.with(started.context, () => this.onmessage?.(message, extra));
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const { attributes, failure } = answerFacts(message);
      this.#end(message.id, attributes, failure);
    }
    return this.inner.send(message, options);
  }

  override setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
    super.setProtocolVersion(version);
  }

  protected innerClosed(): void {
    for (const id of [...this.#open.keys()]) this.#end(id, { [ATTR.errorType]: 'connection_closed' }, 'the client went away');
    this.#instruments.serverSession.record((performance.now() - this.#startedMs) / 1000, this.#attributes());
  }

  #attributes(): Attributes {
    const session = this.inner.sessionId;
    return {
      ...this.#wire,
      ...(this.#protocolVersion && { [ATTR.protocolVersion]: this.#protocolVersion }),
      ...(session && { [ATTR.sessionId]: session }),
    };
  }

  #end(id: RequestId | undefined, extra: Attributes, failure: string | undefined): void {
    const open = id === undefined ? undefined : this.#open.get(id);
    if (!open) return;
    this.#open.delete(id!);
    const measured = finish(open, extra, failure);
    this.#instruments.serverOperation.record((performance.now() - open.startedMs) / 1000, metricAttributes(measured));
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
  #closing = false;

  constructor(inner: Transport, peer: DownstreamPeer, instruments: Instruments) {
    super(inner);
    this.#instruments = instruments;
    this.#peer = peer;
    this.#wire = peerAttributes(peer);
    // What the request layer and the SDK read off a stdio or modern HTTP transport shows through.
    for (const key of ['stderr', 'pid', 'hasPerRequestStream'])
      if (key in inner) Object.defineProperty(this, key, { get: () => (inner as unknown as Meta)[key] });
    instruments.downstreamOpened(peer.serverName);
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!('method' in message) || !('id' in message)) return this.inner.send(message, options);
    const { name, attributes } = requestFacts(message.method, message.params);
    Object.assign(attributes, this.#wire, this.#protocolVersion && { [ATTR.protocolVersion]: this.#protocolVersion });
    const parent = context.active();
    const span = this.#instruments.tracer.startSpan(
      name,
      { kind: SpanKind.CLIENT, attributes: { ...attributes, [ATTR.requestId]: String(message.id) } },
      parent,
    );
    this.#open.set(message.id, { span, startedMs: performance.now(), attributes });
    const meta: Meta = { ...metaOf(message.params) };
    propagation.inject(trace.setSpan(parent, span), meta);
    return this.inner.send({ ...message, params: { ...message.params, _meta: meta } }, options);
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const { attributes, failure } = answerFacts(message);
      this.#end(message.id, attributes, failure);
    }
    this.onmessage?.(message, extra);
  }

  override setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
    super.setProtocolVersion(version);
  }

  override close(): Promise<void> {
    this.#closing = true;
    return super.close();
  }

  protected innerClosed(): void {
    for (const id of [...this.#open.keys()]) this.#end(id, { [ATTR.errorType]: 'connection_closed' }, 'the server connection closed');
    const attributes = { ...this.#wire, ...(this.#protocolVersion && { [ATTR.protocolVersion]: this.#protocolVersion }) };
    this.#instruments.clientSession.record((performance.now() - this.#startedMs) / 1000, attributes);
    this.#instruments.downstreamClosed(this.#peer.serverName, !this.#closing);
  }

  #end(id: RequestId, extra: Attributes, failure: string | undefined): void {
    const open = this.#open.get(id);
    if (!open) return;
    this.#open.delete(id);
    const measured = finish(open, extra, failure);
    this.#instruments.clientOperation.record((performance.now() - open.startedMs) / 1000, metricAttributes(measured));
    if (measured[ATTR.methodName] === 'tools/call') this.#instruments.toolCalled(measured);
  }
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
