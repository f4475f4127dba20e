// Telemetry on: the OpenTelemetry Node SDK started from the standard OTEL_* variables, its
// problems (an unreachable collector, a bad value) told once on stderr and never to a call, and the
// Telemetry the rest of loadout records through. Loaded only by startTelemetry, only when it is on.
import { context, diag, metrics, trace, DiagLogLevel, SpanKind, SpanStatusCode, type DiagLogger } from '@opentelemetry/api';
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
import { ATTR, LOADOUT_ATTR } from './names.js';
import { metaOf } from './requestFacts.js';
import { TELEMETRY_OFF, type ExportChoice, type ServedRequest, type Telemetry } from './telemetry.js';
import { ClientSpans, ServerSpans } from './wireSpans.js';

/** What openTelemetry starts: the OTLP exports the environment asks for, and Prometheus for `--metrics`. */
export interface OtelOptions extends ExportChoice {
  readonly prometheus: boolean;
  readonly logger: Logger;
  readonly env: NodeJS.ProcessEnv;
}

const SERVICE_NAME = 'loadout';
// Within serve's shutdown limit (1.9 s), after the children have been ended.
const FLUSH_AT_CLOSE_MS = 500;
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
  const prometheus = options.prometheus ? new PrometheusExporter({ preventServerStart: true }) : undefined;
  let providers: { traces?: NodeTracerProvider; metrics?: MeterProvider };
  try {
    // The SDK's parts, not sdk-node: that one also brings the gRPC exporters, whose dependencies
    // carry an install script and @types packages into every install of loadout.
    diag.setLogger(warnOnce(logger), DiagLogLevel.WARN);
    const json = otlpProtocol(env, logger) === 'http/json';
    // Not the process detector: it records the command line, and `serve --token` puts a secret there.
    const resource = resourceFromAttributes({ 'service.name': SERVICE_NAME }).merge(
      detectResources({ detectors: [envDetector, hostDetector] }),
    );
    // The sampler and batch limits come from OTEL_TRACES_SAMPLER and OTEL_BSP_* (the SDK reads them).
    const traces = options.traces
      ? new NodeTracerProvider({
          resource,
          spanProcessors: [new BatchSpanProcessor(json ? new JsonTraceExporter() : new ProtoTraceExporter())],
        })
      : undefined;
    traces?.register();
    const readers: MetricReader[] = [
      ...(prometheus ? [prometheus] : []),
      ...(options.metrics
        ? [new PeriodicExportingMetricReader({ exporter: json ? new JsonMetricExporter() : new ProtoMetricExporter() })]
        : []),
    ];
    const meters = readers.length > 0 ? new MeterProvider({ resource, readers }) : undefined;
    if (meters) metrics.setGlobalMeterProvider(meters);
    providers = { ...(traces && { traces }), ...(meters && { metrics: meters }) };
  } catch (error) {
    logger.warn({ mod: 'telemetry', err: errorMessage(error) }, 'telemetry is off: the OpenTelemetry SDK did not start');
    return TELEMETRY_OFF;
  }
  const instruments = new Instruments(trace.getTracer(SERVICE_NAME, LOADOUT_VERSION), metrics.getMeter(SERVICE_NAME, LOADOUT_VERSION));
  const recordQuery = env[RECORD_QUERY_VARIABLE]?.trim().toLowerCase() === 'true';
  let closed: Promise<void> | undefined;
  return {
    enabled: true,
    serverTransport: (inner, wire) => new ServerSpans(inner, wire, instruments),
    clientTransport: (inner, peer) => new ClientSpans(inner, peer, instruments),
    serveRequest: (body, request) => servedRequest(instruments, body, request),
    async metaTool(name, run) {
      const startedMs = performance.now();
      const attributes = { [LOADOUT_ATTR.metaTool]: name };
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
          instruments.metaToolDuration.record((performance.now() - startedMs) / 1000, attributes);
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
    watchGateway: (gauges) => instruments.watchGateway(gauges),
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

// A 2026-07-28 HTTP request: its span lasts until its response is written.
function servedRequest(instruments: Instruments, body: unknown, request: IncomingMessage): ServedRequest {
  const message = body as { method?: unknown; id?: unknown; params?: unknown } | undefined;
  if (typeof message?.method !== 'string' || (typeof message.id !== 'string' && typeof message.id !== 'number'))
    return TELEMETRY_OFF.serveRequest(body, request);
  const headers = new Headers();
  for (const name of ['traceparent', 'tracestate', 'baggage']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  const wire = { [ATTR.networkTransport]: 'tcp', [ATTR.networkProtocolName]: 'http' };
  const { method, id } = message;
  const started = instruments.serverRequest(
    { jsonrpc: '2.0', method, id, params: message.params as Record<string, unknown> },
    wire,
    metaOf(message.params),
    headers,
  );
  const { open } = started;
  return {
    run: (handle) => context.with(started.context, handle),
    end(httpStatus) {
      const failed = httpStatus >= 400;
      if (failed) {
        open.span.setAttribute(ATTR.errorType, String(httpStatus));
        open.span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${httpStatus}` });
      }
      open.span.end();
      instruments.serverOperation.record((performance.now() - open.startedMs) / 1000, {
        ...open.attributes,
        ...(failed && { [ATTR.errorType]: String(httpStatus) }),
      });
    },
  };
}
