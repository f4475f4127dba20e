// Every span-starter and instrument loadout records through, made once from OpenTelemetry's global
// providers when telemetry starts: the MCP conventions' histograms, loadout's own counters, gauges
// and histograms (names.ts), and the bookkeeping behind the downstream counters and gauge.
import { SpanKind, ValueType, trace, type Attributes, type Counter, type Histogram, type Meter, type Tracer } from '@opentelemetry/api';
import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import { ATTR, LOADOUT_ATTR, LOADOUT_METRIC, MCP_DURATION_BUCKETS_S, MCP_METRIC } from './names.js';
import type { GatewayGauges } from './telemetry.js';
import { incomingContext, requestFacts, type OpenRequestStart } from './requestFacts.js';

/** The instruments, and what they count between collections. */
export class Instruments {
  readonly tracer: Tracer;
  readonly serverOperation: Histogram;
  readonly clientOperation: Histogram;
  readonly serverSession: Histogram;
  readonly clientSession: Histogram;
  readonly searchDuration: Histogram;
  readonly metaToolDuration: Histogram;
  readonly #toolCalls: Counter;
  readonly #toolErrors: Counter;
  readonly #starts: Counter;
  readonly #restarts: Counter;
  readonly #crashes: Counter;
  // Downstream connections open now, and the servers that have had one (a later one is a restart).
  #connected = 0;
  readonly #started = new Set<string>();
  #gateway: GatewayGauges | undefined;

  constructor(tracer: Tracer, meter: Meter) {
    this.tracer = tracer;
    const seconds = (name: string, description: string, buckets = MCP_DURATION_BUCKETS_S): Histogram =>
      meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } });
    const count = (name: string, unit: string, description: string): Counter =>
      meter.createCounter(name, { unit, description, valueType: ValueType.INT });
    this.serverOperation = seconds(MCP_METRIC.serverOperation, 'MCP request duration as loadout answers it, from arrival to answer.');
    this.clientOperation = seconds(MCP_METRIC.clientOperation, 'MCP request duration as loadout asks it of a downstream server.');
    this.serverSession = seconds(MCP_METRIC.serverSession, 'Duration of a client session with loadout.', SESSION_BUCKETS_S);
    this.clientSession = seconds(MCP_METRIC.clientSession, 'Duration of a connection to a downstream server.', SESSION_BUCKETS_S);
    this.searchDuration = seconds(
      LOADOUT_METRIC.searchDuration,
      'One search of the catalog (discover-all-tools with a query).',
      SEARCH_BUCKETS_S,
    );
    this.metaToolDuration = seconds(LOADOUT_METRIC.metaToolDuration, 'One run of a meta-tool.');
    this.#toolCalls = count(LOADOUT_METRIC.toolCalls, '{call}', 'tools/call requests sent to downstream servers.');
    this.#toolErrors = count(LOADOUT_METRIC.toolErrors, '{call}', 'Downstream tools/call requests that failed or answered isError.');
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
      .createObservableGauge(LOADOUT_METRIC.catalogTools, { unit: '{tool}', description: 'Tools in the catalog.' })
      .addCallback((gauge) => {
        if (this.#gateway) gauge.observe(this.#gateway.catalogTools());
      });
  }

  /** Read these gauges from now on. */
  watchGateway(gauges: GatewayGauges): void {
    this.#gateway = gauges;
  }

  /** Start the SERVER span of a client's request: the context its handling runs in. */
  serverRequest(message: JSONRPCRequest, wire: Attributes, meta: Record<string, unknown> | undefined, headers?: Headers): OpenRequestStart {
    const { name, attributes } = requestFacts(message.method, message.params);
    Object.assign(attributes, wire);
    const { parent, links } = incomingContext(meta, headers);
    const span = this.tracer.startSpan(
      name,
      { kind: SpanKind.SERVER, attributes: { ...attributes, [ATTR.requestId]: String(message.id) }, links },
      parent,
    );
    return { open: { span, startedMs: performance.now(), attributes }, context: trace.setSpan(parent, span) };
  }

  /** A downstream tools/call ended, with these attributes. */
  toolCalled(attributes: Attributes): void {
    const counted = {
      [LOADOUT_ATTR.serverName]: attributes[LOADOUT_ATTR.serverName],
      ...(attributes[ATTR.toolName] !== undefined && { [ATTR.toolName]: attributes[ATTR.toolName] }),
    };
    this.#toolCalls.add(1, counted);
    if (attributes[ATTR.errorType] !== undefined) this.#toolErrors.add(1, { ...counted, [ATTR.errorType]: attributes[ATTR.errorType] });
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
