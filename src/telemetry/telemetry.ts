// What the rest of loadout asks of telemetry, and the no-op answer it gets while telemetry is off
// (the default). Nothing here imports OpenTelemetry: the SDK is loaded by startTelemetry only when
// it is on, so an off gateway loads none of it and its call path is the one it had before (each
// hook hands back the transport it was given, or runs the function it was given).
// Handed to each part that records (store, pool, audit trail, gateway) in its options, never kept
// in the process: two gateways in one process each record to their own, and read their own gauges.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONRPCMessage, Server, Transport, TransportSendOptions } from '@modelcontextprotocol/server';

/**
 * Whether the caller's policy hides the tool or prompt `name` from it: a refused request of one is
 * measured under `_OTHER`, as a name loadout does not have is, so metrics tell a hidden name from
 * an unknown one no more than the answer does. Asked only of a request that failed.
 */
export type HiddenFromCaller = (kind: 'tool' | 'prompt', name: string) => boolean;

/** How a client-facing transport carries messages (network.transport, network.protocol.name). */
export interface ServerWire {
  readonly transport: 'pipe' | 'tcp';
  readonly protocol?: 'http';
  /** Where the client connects from (an HTTP session: the connection that opened it). */
  readonly client?: { readonly address?: string; readonly port?: number };
  /** What its caller's policy hides. */
  readonly hidden?: HiddenFromCaller;
}

/** What the environment asks to export: traces and metrics over OTLP, each or neither. */
export interface ExportChoice {
  readonly traces: boolean;
  readonly metrics: boolean;
}

/** The downstream server a client-side transport talks to. */
export interface DownstreamPeer {
  readonly serverName: string;
  /** Its URL, for a server reached over HTTP (server.address, server.port). */
  readonly url?: string;
}

/** One request answered outside any transport loadout wraps (a 2026-07-28 HTTP request). */
export interface ServedRequest {
  /** Run the request's handling inside its span, so what it sends downstream joins the trace. */
  run<T>(handle: () => T): T;
  /** A message sent in answer: the request's answer says whether it failed (a JSON-RPC error, an isError result). */
  answered(message: JSONRPCMessage): void;
  /** The request is over; with no answer seen, its HTTP status says whether it failed. */
  end(httpStatus: number): void;
}

declare const REQUEST_TRACE: unique symbol;
/** The trace context a request loadout answers arrived in, carried by hand to the requests it sends downstream. */
export interface RequestTrace {
  readonly [REQUEST_TRACE]: true;
}

/** Send options of a downstream request made for a client's request: its trace context goes with it. */
export interface TracedSendOptions extends TransportSendOptions {
  readonly requestTrace?: RequestTrace | undefined;
}

/** What discover-all-tools tells of one search. */
export interface SearchFacts {
  readonly durationS: number;
  readonly query: string;
  readonly resultCount: number;
}

/** One statement of the team store (Postgres): its table, what it did, how long it took, how it failed. */
export interface StoreOperationFacts {
  readonly table: string;
  readonly operation: 'read' | 'list' | 'save' | 'delete';
  readonly durationS: number;
  /** The LoadoutError code it failed with. */
  readonly errorType?: string;
}

/** What a gauge reads when metrics are collected: one value per set of attributes. */
export interface GaugeReading {
  readonly value: number;
  readonly attributes?: Readonly<Record<string, string>>;
}

/** The gateway's gauges, read on each collection, and the names its tools go by. */
export interface GatewayGauges {
  equippedTools(): GaugeReading[];
  catalogTools(): number;
  /** Whether a client calling `name` calls a tool loadout has (a meta-tool or a catalog tool): only those label metrics. */
  knowsTool(name: string): boolean;
  /** Whether a client asking for prompt `name` names a prompt loadout can expose: only those label metrics. */
  knowsPrompt(name: string): boolean;
  /** Whether the team store's change bus listens now; undefined without a Postgres store (no gauge then). */
  storeListening(): boolean | undefined;
}

/** The audit trail's figures in Postgres mode, read on each collection. */
export interface AuditFigures {
  spooledRecords(): number;
  droppedRecords(): number;
}

/** Attribute values a meta-tool adds to its span. */
export type MetaToolNotes = Readonly<Record<string, string | number | boolean>>;

/** loadout's telemetry: spans and metrics while on, nothing at all while off. */
export interface Telemetry {
  readonly enabled: boolean;
  /** Whether spans are recorded (traces on): only then does a request's trace context need carrying. */
  readonly tracing: boolean;
  /** A client's transport, seen from loadout's side: a SERVER span per request it answers. */
  serverTransport(inner: Transport, wire: ServerWire): Transport;
  /** A downstream server's transport: a CLIENT span per request loadout sends, its context in `_meta`. */
  clientTransport(inner: Transport, peer: DownstreamPeer): Transport;
  /** A request served apart from any wrapped transport (2026-07-28 over HTTP: one POST, one request), `hidden`: what its caller's policy hides. */
  serveRequest(body: unknown, request: IncomingMessage, hidden?: HiddenFromCaller): ServedRequest;
  /** A per-request server (2026-07-28 over HTTP): what it answers is told to the request being served. */
  reportAnswers(server: Server): Server;
  /** Run `handle` in the trace context `request` arrived in: for a request an SDK entry delivers later, outside that context. */
  resume<T>(request: JSONRPCMessage, handle: () => T): T;
  /** The trace context `request` arrived in, for a call that carries it by hand (no context is entered for it). */
  requestTrace(request: JSONRPCMessage): RequestTrace | undefined;
  /** Run a meta-tool inside its own span (a child of the tools/call that asked for it). */
  metaTool<T>(name: string, run: () => Promise<T>): Promise<T>;
  /** Add attributes to the meta-tool span running now. */
  noteMetaTool(notes: MetaToolNotes): void;
  /** Record one search of the catalog. */
  searched(facts: SearchFacts): void;
  /** Record one statement of the team store. */
  storeOperation(facts: StoreOperationFacts): void;
  /** Count a call refused for a rate limit, by the limit's kind (`calls_per_minute`, `server_calls_per_minute`). */
  rateLimited(limitKind: string): void;
  /** Read these gauges at each collection (this telemetry's gateway). */
  watchGateway(gauges: GatewayGauges): void;
  /** Read the audit trail's spool figures at each collection (this telemetry's trail). */
  watchAudit(figures: AuditFigures): void;
  /** Serve the metrics as Prometheus text, when `--metrics` asked for them. */
  readonly servePrometheus: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  /** Flush what is buffered and stop. */
  close(): Promise<void>;
}

const UNTRACED: ServedRequest = { run: (handle) => handle(), answered: () => {}, end: () => {} };

/** Telemetry off: every hook gives back what it was given. */
export const TELEMETRY_OFF: Telemetry = {
  enabled: false,
  tracing: false,
  serverTransport: (inner) => inner,
  clientTransport: (inner) => inner,
  serveRequest: () => UNTRACED,
  reportAnswers: (server) => server,
  resume: (_request, handle) => handle(),
  requestTrace: () => undefined,
  metaTool: (_name, run) => run(),
  noteMetaTool: () => {},
  searched: () => {},
  storeOperation: () => {},
  rateLimited: () => {},
  watchGateway: () => {},
  watchAudit: () => {},
  servePrometheus: undefined,
  close: () => Promise.resolve(),
};
