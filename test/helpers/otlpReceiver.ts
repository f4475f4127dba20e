// An OTLP/HTTP receiver (JSON encoding) on loopback, in the test's own process: it keeps every span
// exported to it, flattened, so a test can check a trace's parents, kinds, names, attributes and status.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One received span, with its attributes as plain values and its service's name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  attributes: Record<string, string | number | boolean>;
  /** When it started and ended, in nanoseconds since the epoch. */
  startNs: bigint;
  endNs: bigint;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
export const STATUS_ERROR = 2;

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes?: KeyValue[];
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
}
// A metric's data (sum, gauge, histogram, …) is the one field of it that holds dataPoints.
type MetricData = { dataPoints: { attributes?: KeyValue[] }[] };
interface MetricsRequest {
  resourceMetrics?: { scopeMetrics?: { metrics?: ({ name: string } & Record<string, unknown>)[] }[] }[];
}
function isMetricData(value: unknown): value is MetricData {
  return typeof value === 'object' && value !== null && Array.isArray((value as MetricData).dataPoints);
}

/** One data point of an exported metric (OTLP/HTTP JSON only): the metric's name and the point's attributes. */
export interface ReceivedPoint {
  name: string;
  attributes: Record<string, string | number | boolean>;
}

interface TracesRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function valueOf(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? '';
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/** A listening receiver. */
export interface OtlpReceiver {
  /** Its base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Requests to /v1/metrics received. */
  metricExports: number;
  /** The data points of every metric exported as JSON. */
  readonly metricPoints: ReceivedPoint[];
  close(): Promise<void>;
}

/** Start a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metricPoints: ReceivedPoint[] = [];
  const receiver = { spans, metricExports: 0, metricPoints };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as TracesRequest;
        for (const resource of body.resourceSpans ?? []) {
          const service = String(attributesOf(resource.resource?.attributes)['service.name'] ?? '');
          for (const scope of resource.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                status: { code: span.status?.code ?? 0, message: span.status?.message },
                attributes: attributesOf(span.attributes),
                startNs: BigInt(span.startTimeUnixNano ?? 0),
                endNs: BigInt(span.endTimeUnixNano ?? 0),
              });
        }
      } else if (req.url === '/v1/metrics') {
        receiver.metricExports++;
        if (req.headers['content-type']?.includes('json')) {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MetricsRequest;
          for (const resource of body.resourceMetrics ?? [])
            for (const scope of resource.scopeMetrics ?? [])
              for (const metric of scope.metrics ?? [])
                for (const point of Object.values(metric).flatMap((data) => (isMetricData(data) ? data.dataPoints : [])))
                  metricPoints.push({ name: metric.name, attributes: attributesOf(point.attributes) });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
