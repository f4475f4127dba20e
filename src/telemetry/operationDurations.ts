// The MCP conventions' operation-duration histograms, aggregated by loadout itself and handed to
// each metric reader as a MetricProducer: a request's duration is kept under the frozen attribute
// object its RequestShape hands out, so a call costs a lookup by that object and a bucket increment,
// where the SDK's own histogram hashes the attributes (sorted and stringified) on every record.
// What a reader exports (OTLP, /metrics) reads as the SDK's instrument would: same name, unit,
// description, bucket boundaries and attributes, cumulative or delta as the reader prefers.
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  InstrumentType,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type MetricData,
  type MetricProducer,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import { MCP_DURATION_BUCKETS_S, MCP_METRIC } from './names.js';

/** What a histogram is exported as. */
export interface HistogramDescriptor {
  readonly name: string;
  readonly description: string;
  /** Upper bounds of its buckets, ascending (a value on a bound counts in that bucket, as the SDK's). */
  readonly boundaries: readonly number[];
}

// One series: the durations recorded under one set of attributes.
interface Series {
  readonly attributes: Attributes;
  readonly startTime: HrTime;
  count: number;
  sumS: number;
  minS: number;
  maxS: number;
  readonly counts: number[];
}

// A series as a delta reader last exported it.
interface Exported {
  readonly count: number;
  readonly sumS: number;
  readonly counts: readonly number[];
}

// As the SDK bounds a metric's series (its default cardinality limit): past it, what has new
// attributes goes into one series marked as the overflow (a downstream may answer with any error code).
const MAX_SERIES = 2000;
const OVERFLOW: Attributes = Object.freeze({ 'otel.metric.overflow': true });

/** One duration histogram (seconds) whose series are found by their attribute object. */
export class DurationHistogram {
  readonly descriptor: HistogramDescriptor;
  // Every series, by its attributes' content; the same series by the attribute object last seen for it.
  readonly #series = new Map<string, Series>();
  readonly #byObject = new WeakMap<Attributes, Series>();

  constructor(descriptor: HistogramDescriptor) {
    this.descriptor = descriptor;
  }

  /** Record one duration under `attributes` (fastest when it is an object recorded under before). */
  record(durationS: number, attributes: Attributes): void {
    if (Number.isNaN(durationS)) return;
    const series = this.#byObject.get(attributes) ?? this.#seriesOf(attributes);
    series.count++;
    series.sumS += durationS;
    if (durationS < series.minS) series.minS = durationS;
    if (durationS > series.maxS) series.maxS = durationS;
    const { boundaries } = this.descriptor;
    let bucket = 0;
    while (bucket < boundaries.length && boundaries[bucket]! < durationS) bucket++;
    series.counts[bucket]!++;
  }

  /** The series recorded so far. */
  series(): Iterable<Series> {
    return this.#series.values();
  }

  // A new object with the attributes of a known series (a shape built for its one request) finds it by content.
  #seriesOf(attributes: Attributes): Series {
    const key = JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let series = this.#series.get(key);
    if (!series && this.#series.size >= MAX_SERIES - 1 && attributes !== OVERFLOW) return this.#seriesOf(OVERFLOW);
    if (!series) {
      series = {
        attributes,
        startTime: hrNow(),
        count: 0,
        sumS: 0,
        minS: Infinity,
        maxS: -Infinity,
        counts: new Array<number>(this.descriptor.boundaries.length + 1).fill(0),
      };
      this.#series.set(key, series);
    }
    this.#byObject.set(attributes, series);
    return series;
  }
}

/** The conventions' two operation histograms: a request loadout answers (server), one it sends downstream (client). */
export interface OperationDurations {
  readonly server: DurationHistogram;
  readonly client: DurationHistogram;
}

/** Both operation histograms, empty. */
export function operationDurations(): OperationDurations {
  return {
    server: new DurationHistogram({
      name: MCP_METRIC.serverOperation,
      description: 'MCP request duration as loadout answers it, from arrival to answer.',
      boundaries: MCP_DURATION_BUCKETS_S,
    }),
    client: new DurationHistogram({
      name: MCP_METRIC.clientOperation,
      description: 'MCP request duration as loadout asks it of a downstream server.',
      boundaries: MCP_DURATION_BUCKETS_S,
    }),
  };
}

/** What one metric reader collects of the histograms: a MetricProducer given to it at its construction. */
export class DurationsProducer implements MetricProducer {
  readonly #histograms: readonly DurationHistogram[];
  readonly #resource: Resource;
  readonly #scope: { readonly name: string; readonly version: string };
  #reader: MetricReader | undefined;
  // For a delta reader: each series as last exported, and when.
  readonly #exported = new WeakMap<Series, Exported>();
  #lastCollected: HrTime | undefined;

  constructor(histograms: readonly DurationHistogram[], resource: Resource, scope: { name: string; version: string }) {
    this.#histograms = histograms;
    this.#resource = resource;
    this.#scope = scope;
  }

  /** The reader this producer was given to: its temporality preference is followed. */
  readBy(reader: MetricReader): void {
    this.#reader = reader;
  }

  collect(): Promise<CollectionResult> {
    const delta = this.#reader?.selectAggregationTemporality(InstrumentType.HISTOGRAM) === AggregationTemporality.DELTA;
    const endTime = hrNow();
    const metrics: MetricData[] = [];
    for (const histogram of this.#histograms) {
      const dataPoints: DataPoint<Histogram>[] = [];
      for (const series of histogram.series()) {
        const point = delta
          ? this.#deltaPoint(series, histogram.descriptor, endTime)
          : cumulativePoint(series, histogram.descriptor, endTime);
        if (point) dataPoints.push(point);
      }
      if (dataPoints.length === 0) continue;
      const { name, description } = histogram.descriptor;
      metrics.push({
        descriptor: { name, description, unit: 's', valueType: ValueType.DOUBLE },
        aggregationTemporality: delta ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints,
      });
    }
    this.#lastCollected = endTime;
    return Promise.resolve({ resourceMetrics: { resource: this.#resource, scopeMetrics: [{ scope: this.#scope, metrics }] }, errors: [] });
  }

  // What a series recorded since the last collection (none: no point); min and max cover its whole life, so a delta has neither.
  #deltaPoint(series: Series, descriptor: HistogramDescriptor, endTime: HrTime): DataPoint<Histogram> | undefined {
    const last = this.#exported.get(series);
    if (last?.count === series.count) return undefined;
    this.#exported.set(series, { count: series.count, sumS: series.sumS, counts: [...series.counts] });
    return {
      attributes: series.attributes,
      startTime: last ? (this.#lastCollected ?? series.startTime) : series.startTime,
      endTime,
      value: {
        buckets: {
          boundaries: [...descriptor.boundaries],
          counts: series.counts.map((count, index) => count - (last?.counts[index] ?? 0)),
        },
        count: series.count - (last?.count ?? 0),
        sum: series.sumS - (last?.sumS ?? 0),
      },
    };
  }
}

function cumulativePoint(series: Series, descriptor: HistogramDescriptor, endTime: HrTime): DataPoint<Histogram> {
  return {
    attributes: series.attributes,
    startTime: series.startTime,
    endTime,
    value: {
      buckets: { boundaries: [...descriptor.boundaries], counts: [...series.counts] },
      count: series.count,
      sum: series.sumS,
      ...(series.count > 0 && { min: series.minS, max: series.maxS }),
    },
  };
}

// Now as OpenTelemetry's [seconds, nanoseconds].
function hrNow(): HrTime {
  const ms = performance.timeOrigin + performance.now();
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6))];
}
