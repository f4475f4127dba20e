// Telemetry on: the OpenTelemetry Node SDK started from the standard OTEL_* variables, its
// problems (an unreachable collector, a bad value) told once on stderr and never to a call, and the
// Telemetry the rest of loadout records through. Loaded only by startTelemetry, only when it is on.
import { createNoopMeter, diag, trace, DiagLogLevel, SpanKind, SpanStatusCode, type DiagLogger } from '@opentelemetry/api';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { AsyncLocalStorage } from 'node:async_hooks';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, hostDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { IncomingMessage } from 'node:http';
import { errorMessage, isLoadoutError, LOADOUT_VERSION, settleWithin, type Logger } from '../shared/index.js';
import { Instruments } from './instruments.js';
import { SpanContextManager } from './spanContexts.js';
import { DecidedSampling, samplerFromEnv } from './sampling.js';
import { DurationsProducer, operationDurations, type OperationDurations } from './operationDurations.js';
import { ATTR, LOADOUT_ATTR } from './names.js';
import { answerFacts, metaOf } from './requestFacts.js';
import { protocolVersionLabel, type Failure, type RequestShapes } from './requestShapes.js';
import {
  TELEMETRY_OFF,
  type ExportChoice,
  type HiddenFromCaller,
  type RequestTrace,
  type ServedRequest,
  type Telemetry,
} from './telemetry.js';
import { clientAttributes, ClientSpans, ServerSpans, startTracedRequest, wireBase } from './wireSpans.js';

/** What openTelemetry starts: the OTLP exports the environment asks for, and Prometheus for `--metrics`. */
export interface OtelOptions extends ExportChoice {
  readonly prometheus: boolean;
  readonly logger: Logger;
  readonly env: NodeJS.ProcessEnv;
  /** The replica's id, the resource's `service.instance.id` (OTEL_RESOURCE_ATTRIBUTES may set another). */
  readonly replicaId?: string;
}

const SERVICE_NAME = 'loadout';
const METER_SCOPE = { name: SERVICE_NAME, version: LOADOUT_VERSION };
const HTTP_WIRE = Object.freeze({ [ATTR.networkTransport]: 'tcp', [ATTR.networkProtocolName]: 'http' });
// Within serve's shutdown limit (1.9 s over stdio), after the children have been ended.
const FLUSH_AT_CLOSE_MS = 500;
// Requests whose handling sends nothing downstream and starts no span: their context is not entered,
// since entering one (AsyncLocalStorage) turns on a cost on every promise the process makes after.
const CONTEXT_FREE = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'logging/setLevel',
]);
// A query's text goes on a span only when asked: it may hold what the user typed.
const RECORD_QUERY_VARIABLE = 'LOADOUT_OTEL_RECORD_QUERY';

/** Start the SDK and hand back the Telemetry that records through it; off, with a warning, if it cannot start. */
export function openTelemetry(options: OtelOptions): Telemetry {
  const { logger, env } = options;
  // The SDK's console exporters write to stdout, which is the protocol on stdio.
  const consoleExporter = ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER'].find((name) => /(^|,)\s*console\s*(,|$)/.test(env[name] ?? ''));
  if (consoleExporter) {
    logger.warn({ mod: 'telemetry' }, `telemetry is off: ${consoleExporter}=console would write to stdout; export over OTLP instead`);
    return TELEMETRY_OFF;
  }
  let prometheus: PrometheusExporter | undefined;
  let providers: { traces?: NodeTracerProvider; metrics?: MeterProvider };
  let operations: OperationDurations | undefined;
  let contexts: SpanContextManager | undefined;
  let sampling: DecidedSampling | undefined;
  try {
    // The SDK's parts, not sdk-node: that one also brings the gRPC exporters, whose dependencies
    // carry an install script and @types packages into every install of loadout.
    diag.setLogger(warnOnce(logger), DiagLogLevel.WARN);
    const json = otlpProtocol(env, logger) === 'http/json';
    // Not the process detector: it records the command line, and `serve --token` puts a secret there.
    // service.instance.id tells the replicas of a fleet apart (one series set each), by the id status lists.
    const resource = resourceFromAttributes({
      'service.name': SERVICE_NAME,
      ...(options.replicaId !== undefined && { 'service.instance.id': options.replicaId }),
    }).merge(detectResources({ detectors: [envDetector, hostDetector] }));
    // The sampler comes from OTEL_TRACES_SAMPLER, asked by loadout before a span is (sampling.ts);
    // the batch limits from OTEL_BSP_* (the SDK reads them).
    sampling = options.traces ? new DecidedSampling(samplerFromEnv(env, logger)) : undefined;
    const traces = sampling
      ? new NodeTracerProvider({
          resource,
          sampler: sampling,
          idGenerator: sampling,
          spanProcessors: [new BatchSpanProcessor(json ? new JsonTraceExporter() : new ProtoTraceExporter())],
        })
      : undefined;
    contexts = options.traces ? new SpanContextManager() : undefined;
    // The context API (the active span, `_meta` propagation) is the process's in OpenTelemetry, so
    // the context manager is registered; tracer and meter are taken from this telemetry's own
    // providers, never the global ones, so a second telemetry in the process records to its own.
    traces?.register({ contextManager: contexts });
    // Each reader collects the operation histograms loadout aggregates itself along with the SDK's instruments.
    const measured = options.prometheus || options.metrics ? operationDurations() : undefined;
    const collecting = <Reader extends MetricReader>(make: (metricProducers: DurationsProducer[]) => Reader): Reader => {
      const producers = measured ? [new DurationsProducer([measured.server, measured.client], resource, METER_SCOPE)] : [];
      const reader = make(producers);
      for (const producer of producers) producer.readBy(reader);
      return reader;
    };
    prometheus = options.prometheus
      ? collecting((metricProducers) => new PrometheusExporter({ preventServerStart: true, metricProducers }))
      : undefined;
    const readers: MetricReader[] = [
      ...(prometheus ? [prometheus] : []),
      ...(options.metrics
        ? [
            collecting(
              (metricProducers) =>
                new PeriodicExportingMetricReader({
                  exporter: json ? new JsonMetricExporter() : new ProtoMetricExporter(),
                  ...metricExportTiming(env, logger),
                  metricProducers,
                }),
            ),
          ]
        : []),
    ];
    operations = measured;
    const meters = readers.length > 0 ? new MeterProvider({ resource, readers }) : undefined;
    providers = { ...(traces && { traces }), ...(meters && { metrics: meters }) };
  } catch (error) {
    logger.warn({ mod: 'telemetry', err: errorMessage(error) }, 'telemetry is off: the OpenTelemetry SDK did not start');
    return TELEMETRY_OFF;
  }
  const instruments = new Instruments(
    // With traces off no span is started, whichever tracer this is.
    providers.traces?.getTracer(SERVICE_NAME, LOADOUT_VERSION) ?? trace.getTracer(SERVICE_NAME, LOADOUT_VERSION),
    providers.metrics?.getMeter(METER_SCOPE.name, METER_SCOPE.version) ?? createNoopMeter(),
    options.traces,
    operations,
    contexts,
    sampling,
  );
  // The 2026-07-28 HTTP request being served, for the per-request server that answers it.
  const answers = new AsyncLocalStorage<ServedRequest>();
  // The shapes of 2026-07-28 HTTP requests by protocol version label (a few: protocolVersionLabel bounds them).
  const httpShapes = new Map<string | undefined, RequestShapes>();
  const httpShapesOf = (version: string | undefined): RequestShapes => {
    let shapes = httpShapes.get(version);
    if (!shapes) httpShapes.set(version, (shapes = instruments.shapes(wireBase(HTTP_WIRE, version), instruments.clientNames)));
    return shapes;
  };
  const recordQuery = env[RECORD_QUERY_VARIABLE]?.trim().toLowerCase() === 'true';
  let closed: Promise<void> | undefined;
  return {
    enabled: true,
    tracing: options.traces,
    serverTransport: (inner, wire) => new ServerSpans(inner, wire, instruments),
    clientTransport: (inner, peer) => new ClientSpans(inner, peer, instruments),
    resume: (request, handle) => ('method' in request && CONTEXT_FREE.has(request.method) ? handle() : instruments.resume(request, handle)),
    requestTrace: (request) => instruments.arrivedIn(request) as unknown as RequestTrace | undefined,
    serveRequest: (body, request, hidden) => servedRequest(instruments, answers, httpShapesOf, body, request, hidden),
    reportAnswers(server) {
      // The SDK's handler connects each request's server to a transport of its own making: what
      // that server sends goes through it, so its send is where the answer is seen.
      const connect = server.connect.bind(server);
      server.connect = (transport) => {
        const served = answers.getStore();
        if (served) {
          const send = transport.send.bind(transport);
          transport.send = (message, options) => {
            served.answered(message);
            return send(message, options);
          };
        }
        return connect(transport);
      };
      return server;
    },
    async metaTool(name, run) {
      const startedMs = performance.now();
      const attributes = { [LOADOUT_ATTR.metaTool]: name };
      const measured = (): void => instruments.metaToolDuration.record((performance.now() - startedMs) / 1000, attributes);
      if (!instruments.tracing) return run().finally(measured);
      return instruments.tracer.startActiveSpan(`meta-tool ${name}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
        try {
          const result = await run();
          // A meta-tool tells the agent what went wrong in an isError result rather than throwing.
          if ((result as { isError?: unknown } | undefined)?.isError === true)
            span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool_error' });
          return result;
        } catch (error) {
          // Its code, not its message, which may quote the agent's arguments.
          span.setStatus({ code: SpanStatusCode.ERROR, message: isLoadoutError(error) ? error.code : 'internal' });
          throw error;
        } finally {
          span.end();
          measured();
        }
      });
    },
    noteMetaTool: (notes) => void trace.getActiveSpan()?.setAttributes(notes),
    searched({ durationS, query, resultCount }) {
      instruments.searchDuration.record(durationS);
      trace.getActiveSpan()?.setAttributes({
        [LOADOUT_ATTR.queryLength]: query.length,
        [LOADOUT_ATTR.resultCount]: resultCount,
        ...(recordQuery && { [LOADOUT_ATTR.queryText]: query }),
      });
    },
    storeOperation({ table, operation, durationS, errorType }) {
      instruments.storeOperation.record(durationS, {
        [ATTR.dbSystem]: 'postgresql',
        [ATTR.dbCollection]: table,
        [ATTR.dbOperation]: operation,
        ...(errorType !== undefined && { [ATTR.errorType]: errorType }),
      });
    },
    rateLimited: (limitKind) => instruments.rateLimitRefusals.add(1, { [LOADOUT_ATTR.limitKind]: limitKind }),
    watchGateway: (gauges) => instruments.watchGateway(gauges),
    watchAudit: (figures) => instruments.watchAudit(figures),
    servePrometheus: prometheus && ((req, res) => prometheus.getMetricsRequestHandler(req, res)),
    close() {
      // What is buffered gets a moment to leave; a collector that is down must not hold up the exit.
      closed ??= settleWithin(
        Promise.all([providers.traces?.shutdown(), providers.metrics?.shutdown()]).catch((error: unknown) =>
          logger.debug({ mod: 'telemetry', err: errorMessage(error) }, 'flush failed'),
        ),
        FLUSH_AT_CLOSE_MS,
      );
      return closed;
    },
  };
}

// OTLP goes over HTTP, as protobuf (the standard's default) or JSON; gRPC is not built in.
function otlpProtocol(env: NodeJS.ProcessEnv, logger: Logger): 'http/protobuf' | 'http/json' {
  const asked = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (asked === 'http/json') return 'http/json';
  if (asked && asked !== 'http/protobuf')
    logger.warn({ mod: 'telemetry' }, `OTEL_EXPORTER_OTLP_PROTOCOL=${asked} is not supported: exporting over http/protobuf`);
  return 'http/protobuf';
}

// OTEL_METRIC_EXPORT_INTERVAL and _TIMEOUT (ms): sdk-node reads them, the parts loadout starts do
// not. A timeout is never longer than the interval (the reader refuses that pair).
function metricExportTiming(env: NodeJS.ProcessEnv, logger: Logger): { exportIntervalMillis?: number; exportTimeoutMillis?: number } {
  const read = (name: string): number | undefined => {
    const text = env[name]?.trim();
    if (!text) return undefined;
    const ms = Number(text);
    if (Number.isInteger(ms) && ms > 0) return ms;
    logger.warn({ mod: 'telemetry' }, `${name}=${text} is not a positive number of milliseconds: using the default`);
    return undefined;
  };
  const interval = read('OTEL_METRIC_EXPORT_INTERVAL');
  const timeout = read('OTEL_METRIC_EXPORT_TIMEOUT');
  return {
    ...(interval !== undefined && { exportIntervalMillis: interval }),
    ...(timeout !== undefined && { exportTimeoutMillis: interval === undefined ? timeout : Math.min(timeout, interval) }),
  };
}

// The SDK's warnings and errors (a failed export every few seconds while a collector is down): the
// first on stderr as one warning, the rest at debug level, so a missing collector costs one line.
function warnOnce(logger: Logger): DiagLogger {
  let warned = false;
  const report = (message: string, ...args: unknown[]): void => {
    const text = [message, ...args.map((arg) => errorMessage(arg))].join(' ');
    if (warned) return logger.debug({ mod: 'telemetry' }, text);
    warned = true;
    logger.warn({ mod: 'telemetry' }, `${text} (telemetry goes on; later problems are logged at debug level)`);
  };
  const quiet = (): void => {};
  return { error: report, warn: report, info: quiet, debug: quiet, verbose: quiet };
}

// A 2026-07-28 HTTP request: its span lasts until its response is written, and its answer (a
// JSON-RPC error, an isError result) says whether it failed; failing that, its HTTP status.
function servedRequest(
  instruments: Instruments,
  answers: AsyncLocalStorage<ServedRequest>,
  shapes: (protocolVersion: string | undefined) => RequestShapes,
  body: unknown,
  request: IncomingMessage,
  hidden: HiddenFromCaller | undefined,
): ServedRequest {
  const message = body as { method?: unknown; id?: unknown; params?: Record<string, unknown> } | undefined;
  if (typeof message?.method !== 'string' || (typeof message.id !== 'string' && typeof message.id !== 'number'))
    return TELEMETRY_OFF.serveRequest(body, request);
  const { id } = message;
  const meta = metaOf(message.params);
  const version = meta?.[PROTOCOL_VERSION_META_KEY] ?? request.headers['mcp-protocol-version'];
  const shape = shapes(typeof version === 'string' ? protocolVersionLabel(version) : undefined).of(message.method, message.params);
  const { open, within } = instruments.tracing
    ? startTracedRequest(instruments, shape, {
        id,
        meta,
        header: (name) => {
          const value = request.headers[name];
          return typeof value === 'string' ? value : undefined;
        },
        client: clientAttributes({ address: request.socket.remoteAddress, port: request.socket.remotePort }),
      })
    : { open: instruments.startRequest(SpanKind.SERVER, shape), within: undefined };
  // A call answered straight from the session's intake finds its context by its request.
  if (within) instruments.arrived(message, within);
  let failure: Failure | undefined;
  let ended = false;
  const served: ServedRequest = {
    run: (handle) => answers.run(served, within ? () => instruments.enter(within, handle) : handle),
    answered(answer) {
      if (('result' in answer || 'error' in answer) && answer.id === id) failure = answerFacts(answer);
    },
    end(httpStatus) {
      if (ended) return;
      ended = true;
      // A request refused before any answer was built (a body too large, a bad header) has its status only.
      if (!failure && httpStatus >= 400) failure = { errorType: String(httpStatus), message: `HTTP ${httpStatus}` };
      instruments.endRequest(open, failure, instruments.serverOperation, hidden);
    },
  };
  return served;
}
