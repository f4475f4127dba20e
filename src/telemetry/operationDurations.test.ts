import { describe, expect, it } from 'vitest';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  MetricReader,
  type AggregationTemporalitySelector,
  type HistogramMetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { DurationHistogram, DurationsProducer } from './operationDurations.js';

// A reader collected by hand, with the temporality it is given.
class HandReader extends MetricReader {
  constructor(metricProducers: MetricProducer[], temporality: AggregationTemporality) {
    const aggregationTemporalitySelector: AggregationTemporalitySelector = () => temporality;
    super({ metricProducers, aggregationTemporalitySelector });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const BOUNDARIES = [0.01, 0.02, 0.05, 0.1];
const resource = resourceFromAttributes({ 'service.name': 'test' });

// The same durations recorded by the SDK's histogram ('sdk') and by DurationHistogram ('own'), read by one reader.
function bothWays(temporality: AggregationTemporality) {
  const own = new DurationHistogram({ name: 'own', description: 'd', boundaries: BOUNDARIES });
  const producer = new DurationsProducer([own], resource, { name: 'scope', version: '1' });
  const reader = new HandReader([producer], temporality);
  producer.readBy(reader);
  const sdk = new MeterProvider({ resource, readers: [reader] })
    .getMeter('scope', '1')
    .createHistogram('sdk', { unit: 's', description: 'd', advice: { explicitBucketBoundaries: BOUNDARIES } });
  const record = (durationS: number, attributes: Record<string, string>): void => {
    own.record(durationS, attributes);
    sdk.record(durationS, attributes);
  };
  const collect = async (): Promise<Map<string, HistogramMetricData>> => {
    const { resourceMetrics } = await reader.collect();
    const found = new Map<string, HistogramMetricData>();
    for (const scope of resourceMetrics.scopeMetrics)
      for (const metric of scope.metrics) if (metric.dataPointType === DataPointType.HISTOGRAM) found.set(metric.descriptor.name, metric);
    return found;
  };
  return { record, collect };
}

// A metric's points without their times, by their attributes.
function points(metric: HistogramMetricData | undefined) {
  return new Map(metric?.dataPoints.map((point) => [JSON.stringify(point.attributes), point.value]));
}

describe('DurationHistogram', () => {
  it('exports the buckets, count, sum, min and max the SDK histogram does, per set of attributes', async () => {
    const { record, collect } = bothWays(AggregationTemporality.CUMULATIVE);
    const ok = Object.freeze({ 'mcp.method.name': 'tools/call' });
    const failed = Object.freeze({ 'mcp.method.name': 'tools/call', 'error.type': 'tool_error' });
    // A value on a bound falls in that bound's bucket; one past the last bound in the overflow bucket.
    for (const durationS of [0.001, 0.01, 0.015, 0.05, 0.2]) record(durationS, ok);
    record(0.03, failed);
    // A new object with the attributes of a known series joins that series.
    record(0.04, { 'error.type': 'tool_error', 'mcp.method.name': 'tools/call' });
    const metrics = await collect();
    const own = metrics.get('own')!;
    expect(own.descriptor).toMatchObject({ unit: 's', description: 'd' });
    expect(own.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    const ours = points(own);
    expect(ours.size).toBe(2);
    expect(ours.get(JSON.stringify(ok))).toEqual({
      buckets: { boundaries: BOUNDARIES, counts: [2, 1, 1, 0, 1] },
      count: 5,
      sum: expect.closeTo(0.276, 9),
      min: 0.001,
      max: 0.2,
    });
    // The SDK's own histogram, given the same records, says the same of each series.
    const sdk = points(metrics.get('sdk'));
    expect(sdk.size).toBe(2);
    for (const [attributes, value] of ours)
      expect(value).toEqual({ ...sdk.get(attributes), sum: expect.closeTo(sdk.get(attributes)!.sum!, 9) });
  });

  it('exports only what each series recorded since the last collection to a delta reader', async () => {
    const { record, collect } = bothWays(AggregationTemporality.DELTA);
    const ok = Object.freeze({ 'mcp.method.name': 'ping' });
    const other = Object.freeze({ 'mcp.method.name': 'tools/list' });
    record(0.001, ok);
    record(0.03, other);
    await collect();
    record(0.2, ok);
    const second = await collect();
    expect(second.get('own')!.aggregationTemporality).toBe(AggregationTemporality.DELTA);
    // The series with nothing new is left out, as the SDK leaves it out.
    expect([...points(second.get('own')).keys()]).toEqual([JSON.stringify(ok)]);
    expect(points(second.get('own')).get(JSON.stringify(ok))).toMatchObject({
      buckets: { counts: [0, 0, 0, 0, 1] },
      count: 1,
      sum: 0.2,
    });
    expect([...points(second.get('sdk')).keys()]).toEqual([JSON.stringify(ok)]);
  });

  it('keeps at most 2,000 series, as the SDK does: past them, new attributes go into the overflow series', async () => {
    const { record, collect } = bothWays(AggregationTemporality.CUMULATIVE);
    // A downstream server may answer with any error code: each would be a series.
    for (let code = 0; code < 2100; code++) record(0.001, { 'mcp.method.name': 'tools/call', 'error.type': String(code) });
    const metrics = await collect();
    const ours = points(metrics.get('own'));
    expect(ours.size).toBe(2000);
    expect(ours.get(JSON.stringify({ 'otel.metric.overflow': true }))?.count).toBe(101);
    expect(points(metrics.get('sdk')).get(JSON.stringify({ 'otel.metric.overflow': true }))?.count).toBe(101);
  });
});
