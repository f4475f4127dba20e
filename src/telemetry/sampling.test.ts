import { describe, expect, it } from 'vitest';
import { createNoopMeter, trace, ROOT_CONTEXT, SpanKind, TraceFlags, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { Instruments } from './instruments.js';
import { RequestShapes } from './requestShapes.js';
import { DecidedSampling, samplerFromEnv } from './sampling.js';
import type { Logger } from '../shared/index.js';

const quiet = { warn: () => {}, debug: () => {} } as unknown as Logger;

// Instruments tracing through a provider sampled as OTEL_TRACES_SAMPLER(_ARG) say, its spans kept in
// memory, and how many spans were asked of the SDK's tracer.
function traced(env: NodeJS.ProcessEnv) {
  const sampling = new DecidedSampling(samplerFromEnv(env, quiet));
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    sampler: sampling,
    idGenerator: sampling,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const sdkTracer = provider.getTracer('test');
  const asked = { spans: 0 };
  const tracer: Tracer = {
    startSpan: (...args) => (asked.spans++, sdkTracer.startSpan(...args)),
    startActiveSpan: sdkTracer.startActiveSpan.bind(sdkTracer),
  };
  const instruments = new Instruments(tracer, createNoopMeter(), true, undefined, undefined, sampling);
  const shape = new RequestShapes({}, { tool: () => true, prompt: () => true }).of('tools/call', { name: 'echo' });
  return { instruments, shape, exporter, asked };
}

describe('sampling decided before a span is started', () => {
  it('starts no span for a request the sampler drops, and still tells the downstream the trace, not sampled', () => {
    const { instruments, shape, exporter, asked } = traced({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    const open = instruments.startRequest(SpanKind.SERVER, shape);
    expect(asked.spans).toBe(0);
    expect(open.span?.isRecording()).toBe(false);
    // What a downstream's traceparent is written from: a valid trace and span id, flags 00.
    const carried = open.span!.spanContext();
    expect(trace.isSpanContextValid(carried)).toBe(true);
    expect(carried.traceFlags).toBe(TraceFlags.NONE);
    instruments.endRequest(open, undefined, undefined);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('draws a ratio once per trace, on the trace id the span is exported with', () => {
    const { instruments, shape, exporter, asked } = traced({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    });
    const requests = 2000;
    const opened = Array.from({ length: requests }, () => instruments.startRequest(SpanKind.SERVER, shape));
    for (const open of opened) instruments.endRequest(open, undefined, undefined);
    const sampled = opened.filter((open) => (open.span!.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0);
    const exported = exporter.getFinishedSpans();
    // Only the sampled ones reached the SDK, and each was exported, with the trace id it was decided on.
    expect(asked.spans).toBe(sampled.length);
    expect(exported.map((span) => span.spanContext().traceId).sort()).toEqual(
      sampled.map((open) => open.span!.spanContext().traceId).sort(),
    );
    const ratio = new TraceIdRatioBasedSampler(0.1);
    for (const span of exported) expect(ratio.shouldSample(ROOT_CONTEXT, span.spanContext().traceId).decision).not.toBe(0 /* NOT_RECORD */);
    // One draw of 0.1 per trace: about 200 of 2000 (five standard deviations either side); drawn twice, about 20.
    expect(exported.length).toBeGreaterThan(133);
    expect(exported.length).toBeLessThan(267);
  });

  it('keeps the parent decision of parentbased samplers for a sampled parent', () => {
    const { instruments, shape, exporter } = traced({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    const parent = trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 }));
    instruments.endRequest(instruments.startRequest(SpanKind.SERVER, shape, parent), undefined, undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe('1'.repeat(32));
    expect(span?.parentSpanContext?.spanId).toBe('2'.repeat(16));
  });

  it('warns of a sampler it does not know and of a ratio out of range', () => {
    const warned: string[] = [];
    const logger = { warn: (_: unknown, text: string) => warned.push(text) } as unknown as Logger;
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'sometimes' }, logger).toString()).toMatch(/ParentBased.*AlwaysOn/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, logger).toString()).toMatch(/\{1\}/);
    expect(warned).toEqual([
      'OTEL_TRACES_SAMPLER=sometimes is not a sampler: using parentbased_always_on',
      'OTEL_TRACES_SAMPLER_ARG=2 is not a ratio from 0 to 1: sampling every trace',
    ]);
  });
});
