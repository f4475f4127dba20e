// Sampling decided before a span is asked for: the sampler OTEL_TRACES_SAMPLER names is asked by
// loadout for each span it starts, and a span it does not record is only a trace context (a trace
// id, a new span id, flags 00), never the SDK's span start (which sanitizes the attributes, counts
// the span in the tracer's own metrics and samples again). A span it records is started by the SDK
// with the same trace id and that same decision, so a ratio is drawn once per span, not twice.
import { trace, TraceFlags, type Attributes, type Context, type Link, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  RandomIdGenerator,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-node';
import type { Logger } from '../shared/index.js';

// The span the SDK is about to start, and what was decided for it.
interface Decided {
  readonly traceId: string;
  readonly result: SamplingResult;
}

/**
 * The tracer provider's sampler and id generator both: it hands the SDK the trace id and the
 * decision loadout drew for the span being started, and is the configured sampler for any other.
 */
export class DecidedSampling implements Sampler, IdGenerator {
  readonly #sampler: Sampler;
  readonly #ids = new RandomIdGenerator();
  #decided: Decided | undefined;

  constructor(sampler: Sampler) {
    this.#sampler = sampler;
  }

  /** Start a span, if the sampler records it; a non-recording span carrying the trace context if not. */
  startSpan(tracer: Tracer, name: string, kind: SpanKind, attributes: Attributes, parent: Context, links: Link[] | undefined): Span {
    const parentSpan = trace.getSpanContext(parent);
    const child = parentSpan !== undefined && trace.isSpanContextValid(parentSpan);
    const traceId = child ? parentSpan.traceId : this.#ids.generateTraceId();
    const result = this.#sampler.shouldSample(parent, traceId, name, kind, attributes, links ?? []);
    if (result.decision === SamplingDecision.NOT_RECORD) {
      const traceState = result.traceState ?? (child ? parentSpan.traceState : undefined);
      return trace.wrapSpanContext({
        traceId,
        spanId: this.#ids.generateSpanId(),
        traceFlags: TraceFlags.NONE,
        ...(traceState && { traceState }),
      });
    }
    this.#decided = { traceId, result };
    try {
      return tracer.startSpan(name, { kind, attributes, ...(links && { links }) }, parent);
    } finally {
      this.#decided = undefined;
    }
  }

  shouldSample(...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    const decided = this.#decided;
    if (decided !== undefined && decided.traceId === args[1]) return decided.result;
    return this.#sampler.shouldSample(...args);
  }

  generateTraceId(): string {
    return this.#decided?.traceId ?? this.#ids.generateTraceId();
  }

  generateSpanId(): string {
    return this.#ids.generateSpanId();
  }

  toString(): string {
    return this.#sampler.toString();
  }
}

const DEFAULT_RATIO = 1;

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, as the SDK builds it from them
 * (it does not export that): parentbased_always_on unless told, a bad value warned of and replaced
 * by the SDK's default.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv, logger: Logger): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on';
  const ratio = (): Sampler => new TraceIdRatioBasedSampler(samplerRatio(env, logger));
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      logger.warn({ mod: 'telemetry' }, `OTEL_TRACES_SAMPLER=${name} is not a sampler: using parentbased_always_on`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function samplerRatio(env: NodeJS.ProcessEnv, logger: Logger): number {
  const text = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = text ? Number(text) : Number.NaN;
  if (ratio >= 0 && ratio <= 1) return ratio;
  logger.warn({ mod: 'telemetry' }, `OTEL_TRACES_SAMPLER_ARG=${text ?? ''} is not a ratio from 0 to 1: sampling every trace`);
  return DEFAULT_RATIO;
}
