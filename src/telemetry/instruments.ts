// Every span-starter and instrument loadout records through, made once from OpenTelemetry's global
// providers when telemetry starts: the MCP conventions' histograms, loadout's own counters, gauges
// and histograms (names.ts), the bookkeeping behind the downstream counters and gauge, and the
// start and end of every request's span and measurement.
import {
  context,
  trace,
  ROOT_CONTEXT,
  SpanStatusCode,
  ValueType,
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Link,
  type Meter,
  type ObservableResult,
  type Span,
  type SpanKind,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR, DB_DURATION_BUCKETS_S, DB_METRIC, LOADOUT_ATTR, LOADOUT_METRIC, MCP_DURATION_BUCKETS_S, MCP_METRIC } from './names.js';
import type { DurationHistogram, OperationDurations } from './operationDurations.js';
import type { SpanContextManager } from './spanContexts.js';
import type { DecidedSampling } from './sampling.js';
import type { AuditFigures, GatewayGauges, HiddenFromCaller } from './telemetry.js';
import { RequestShapes, type Failure, type KnownNames, type RequestShape } from './requestShapes.js';

/** A request under way: its span (none while traces are off), its shape, and when it started. */
export interface OpenRequest {
  readonly span: Span | undefined;
  readonly shape: RequestShape;
  readonly startedMs: number;
}

// The tools/call requests sent to one downstream tool, and those that failed by error.type.
interface ToolTally {
  readonly attributes: Attributes;
  calls: number;
  readonly errors: Map<string, number>;
}

// Downstream tool and prompt names are the catalog's own: every one may label a metric.
const ANY_NAME: KnownNames = { tool: () => true, prompt: () => true };

/** The instruments, and what they count between collections. */
export class Instruments {
  readonly tracer: Tracer;
  /** Whether spans are recorded (traces exported); metrics only, no span is started. */
  readonly tracing: boolean;
  /** The operation histograms; none while no metric reader collects them. */
  readonly serverOperation: DurationHistogram | undefined;
  readonly clientOperation: DurationHistogram | undefined;
  readonly serverSession: Histogram;
  readonly clientSession: Histogram;
  readonly searchDuration: Histogram;
  readonly metaToolDuration: Histogram;
  readonly storeOperation: Histogram;
  readonly rateLimitRefusals: Counter;
  readonly #starts: Counter;
  readonly #restarts: Counter;
  readonly #crashes: Counter;
  // Downstream connections open now, and the servers that have had one (a later one is a restart).
  #connected = 0;
  readonly #started = new Set<string>();
  #gateway: GatewayGauges | undefined;
  #audit: AuditFigures | undefined;
  readonly #shapes = new Map<string, RequestShapes>();
  readonly #tallies = new Map<string, ToolTally>();
  readonly #tallyOf = new WeakMap<RequestShape, ToolTally>();
  // The context each request a client sent arrived in, for as long as the request object lives.
  readonly #arrivedIn = new WeakMap<object, Context>();
  readonly #contexts: SpanContextManager | undefined;
  readonly #sampling: DecidedSampling | undefined;

  constructor(
    tracer: Tracer,
    meter: Meter,
    tracing: boolean,
    operations: OperationDurations | undefined,
    contexts: SpanContextManager | undefined,
    sampling: DecidedSampling | undefined,
  ) {
    this.tracer = tracer;
    this.#contexts = contexts;
    this.#sampling = sampling;
    this.tracing = tracing;
    // Aggregated by loadout (operationDurations.ts): the metrics SDK would hash their attributes on every request.
    this.serverOperation = operations?.server;
    this.clientOperation = operations?.client;
    const seconds = (name: string, description: string, buckets = MCP_DURATION_BUCKETS_S): Histogram =>
      meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } });
    const count = (name: string, unit: string, description: string): Counter =>
      meter.createCounter(name, { unit, description, valueType: ValueType.INT });
    this.serverSession = seconds(MCP_METRIC.serverSession, 'Duration of a client session with loadout.', SESSION_BUCKETS_S);
    this.clientSession = seconds(MCP_METRIC.clientSession, 'Duration of a connection to a downstream server.', SESSION_BUCKETS_S);
    this.searchDuration = seconds(
      LOADOUT_METRIC.searchDuration,
      'One search of the catalog (discover-all-tools with a query).',
      SEARCH_BUCKETS_S,
    );
    this.metaToolDuration = seconds(LOADOUT_METRIC.metaToolDuration, 'One run of a meta-tool.');
    this.storeOperation = seconds(DB_METRIC.clientOperation, 'One statement of the team store, to its answer.', DB_DURATION_BUCKETS_S);
    // Counted in memory per call and read at collection: a call costs an increment, not an SDK record.
    const tallied = (name: string, description: string, observe: (counter: ObservableResult) => void): void =>
      meter.createObservableCounter(name, { unit: '{call}', description, valueType: ValueType.INT }).addCallback(observe);
    tallied(LOADOUT_METRIC.toolCalls, 'tools/call requests sent to downstream servers.', (counter) => {
      for (const tally of this.#tallies.values()) counter.observe(tally.calls, tally.attributes);
    });
    tallied(LOADOUT_METRIC.toolErrors, 'Downstream tools/call requests that failed or answered isError.', (counter) => {
      for (const tally of this.#tallies.values())
        for (const [errorType, count] of tally.errors) counter.observe(count, { ...tally.attributes, [ATTR.errorType]: errorType });
    });
    this.rateLimitRefusals = count(LOADOUT_METRIC.rateLimitRefusals, '{call}', 'Calls refused for a rate limit, by the limit.');
    this.#starts = count(LOADOUT_METRIC.downstreamStarts, '{connection}', 'Downstream connections opened.');
    this.#restarts = count(
      LOADOUT_METRIC.downstreamRestarts,
      '{connection}',
      'Downstream connections opened for a server that had one before.',
    );
    this.#crashes = count(
      LOADOUT_METRIC.downstreamCrashes,
      '{connection}',
      'Downstream connections that ended without loadout closing them.',
    );
    meter
      .createObservableGauge(LOADOUT_METRIC.connectedServers, { unit: '{connection}', description: 'Downstream connections open now.' })
      .addCallback((gauge) => gauge.observe(this.#connected));
    meter
      .createObservableGauge(LOADOUT_METRIC.equippedTools, {
        unit: '{tool}',
        description: 'Tools equipped: 2025 sessions together, 2026-07-28 principals together.',
      })
      .addCallback((gauge) => {
        for (const reading of this.#gateway?.equippedTools() ?? []) gauge.observe(reading.value, reading.attributes);
      });
    meter
      .createObservableGauge(LOADOUT_METRIC.storeListening, {
        unit: '{listener}',
        description: "1 while the team store's change bus listens, 0 while it reconnects.",
      })
      .addCallback((gauge) => {
        const listening = this.#gateway?.storeListening();
        if (listening !== undefined) gauge.observe(listening ? 1 : 0);
      });
    meter
      .createObservableGauge(LOADOUT_METRIC.catalogTools, { unit: '{tool}', description: 'Tools in the catalog.' })
      .addCallback((gauge) => {
        if (this.#gateway) gauge.observe(this.#gateway.catalogTools());
      });
    // Only in Postgres mode, where the trail has a spool: in files mode the day files are the trail.
    meter
      .createObservableGauge(LOADOUT_METRIC.auditSpooled, {
        unit: '{record}',
        description: 'Audit records in the spool of the data dir, not yet in the store.',
      })
      .addCallback((gauge) => {
        if (this.#audit) gauge.observe(this.#audit.spooledRecords());
      });
    meter
      .createObservableCounter(LOADOUT_METRIC.auditDropped, {
        unit: '{record}',
        description: 'Audit records dropped: the spool was full while the store could not take them.',
        valueType: ValueType.INT,
      })
      .addCallback((counter) => {
        if (this.#audit) counter.observe(this.#audit.droppedRecords());
      });
  }

  /** Read these gauges from now on. */
  watchGateway(gauges: GatewayGauges): void {
    this.#gateway = gauges;
  }

  /** Read the audit spool's figures from now on. */
  watchAudit(figures: AuditFigures): void {
    this.#audit = figures;
  }

  /** The shapes of requests on the wire `base` (one set per wire, whichever connection it is). */
  shapes(base: Attributes, known: KnownNames = ANY_NAME): RequestShapes {
    const key = JSON.stringify(base);
    let shapes = this.#shapes.get(key);
    if (!shapes) this.#shapes.set(key, (shapes = new RequestShapes(base, known)));
    return shapes;
  }

  /** Which tool and prompt names a client sent may label a metric: those loadout has (the gateway says); none before a gateway is watched. */
  readonly clientNames: KnownNames = {
    tool: (name) => this.#gateway?.knowsTool(name) ?? false,
    prompt: (name) => this.#gateway?.knowsPrompt(name) ?? false,
  };

  /**
   * Start a request's span (while traces are on, unless `traced` is false) and its clock. A span
   * the sampler does not record is a trace context only (sampling.ts): nothing of it is built.
   */
  startRequest(kind: SpanKind, shape: RequestShape, parent: Context = ROOT_CONTEXT, links?: Link[], traced = this.tracing): OpenRequest {
    const span = traced ? this.#sampling?.startSpan(this.tracer, shape.name, kind, shape.attributes, parent, links) : undefined;
    return { span, shape, startedMs: performance.now() };
  }

  /** `request` arrived in `within` (its SERVER span's context). */
  arrived(request: object, within: Context): void {
    this.#arrivedIn.set(request, within);
  }

  /** The context `request` arrived in, if it was recorded. */
  arrivedIn(request: object): Context | undefined {
    return this.#arrivedIn.get(request);
  }

  /** Run `handle` in the context `request` arrived in, if it is not the one running now. */
  resume<T>(request: object, handle: () => T): T {
    const arrived = this.#arrivedIn.get(request);
    // Entered already (a 2026-07-28 HTTP request, by its served request's run): its span is active.
    if (arrived === undefined || trace.getSpan(arrived) === trace.getSpan(context.active())) return handle();
    return this.enter(arrived, handle);
  }

  /** Run `handle` in `within`, the context of a request being answered, until its SERVER span ends (endRequest). */
  enter<T>(within: Context, handle: () => T): T {
    const span = trace.getSpan(within);
    return context.with(span && this.#contexts ? this.#contexts.hold(within, span) : within, handle);
  }

  /** The context a downstream request with none carried by hand starts from (SpanContextManager.sendingContext). */
  sendingContext(): Context {
    return this.#contexts?.sendingContext() ?? context.active();
  }

  /**
   * End a request with what its answer said, and record its duration in `histogram`; one that
   * failed naming what `hidden` says its caller's policy hides is recorded under `_OTHER`.
   */
  endRequest(open: OpenRequest, failure: Failure | undefined, histogram: DurationHistogram | undefined, hidden?: HiddenFromCaller): void {
    const { span } = open;
    const named = open.shape.labelled;
    const shape = failure && named && hidden?.(named.kind, named.name) ? open.shape.concealed() : open.shape;
    if (span) {
      if (failure) {
        span.setAttribute(ATTR.errorType, failure.errorType);
        if (failure.statusCode !== undefined) span.setAttribute(ATTR.statusCode, failure.statusCode);
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
      }
      span.end();
      this.#contexts?.release(span);
    }
    histogram?.record((performance.now() - open.startedMs) / 1000, failure ? shape.failed(failure) : shape.measured);
  }

  /** A downstream tools/call ended (counted in memory; the counters read the tallies at each collection). */
  toolCalled(shape: RequestShape, failure: Failure | undefined): void {
    let tally = this.#tallyOf.get(shape);
    if (!tally) {
      const counted = {
        [LOADOUT_ATTR.serverName]: shape.measured[LOADOUT_ATTR.serverName],
        ...(shape.measured[ATTR.toolName] !== undefined && { [ATTR.toolName]: shape.measured[ATTR.toolName] }),
      };
      // Connections of one server share a tally, whatever protocol version each spoke.
      const key = JSON.stringify(counted);
      tally = this.#tallies.get(key);
      if (!tally) this.#tallies.set(key, (tally = { attributes: counted, calls: 0, errors: new Map() }));
      this.#tallyOf.set(shape, tally);
    }
    tally.calls++;
    if (failure) tally.errors.set(failure.errorType, (tally.errors.get(failure.errorType) ?? 0) + 1);
  }

  /** A connection to `serverName` opened. */
  downstreamOpened(serverName: string): void {
    const attributes = { [LOADOUT_ATTR.serverName]: serverName };
    this.#connected++;
    this.#starts.add(1, attributes);
    if (this.#started.has(serverName)) this.#restarts.add(1, attributes);
    this.#started.add(serverName);
  }

  /** A connection to `serverName` ended; `unasked`: not by loadout's close. */
  downstreamClosed(serverName: string, unasked: boolean): void {
    this.#connected--;
    if (unasked) this.#crashes.add(1, { [LOADOUT_ATTR.serverName]: serverName });
  }
}

// A session lasts from seconds to days; a search from well under a millisecond to a model's answer.
const SESSION_BUCKETS_S = [1, 5, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400];
const SEARCH_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
