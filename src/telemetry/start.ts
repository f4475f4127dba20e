// Whether telemetry is on, decided once at start from the standard OTEL_* variables and `--metrics`,
// and the one place the OpenTelemetry SDK is loaded (an `await import`, never on a call's path).
import type { Logger } from '../shared/index.js';
import { TELEMETRY_OFF, type ExportChoice, type Telemetry } from './telemetry.js';

/** How `serve` asks for telemetry. */
export interface TelemetryRequest {
  /** `--metrics`: keep the metrics for /metrics (Prometheus text), exported or not. */
  readonly prometheus: boolean;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** The replica's id: the resource's `service.instance.id`. */
  readonly replicaId?: string;
}

// Any of these names an exporter: telemetry is on. OTEL_SDK_DISABLED=true turns it off whatever else is set.
const EXPORT_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
];

/** Read the OTEL_* variables: what is exported (nothing unless one of them names an exporter). */
export function exportChoice(env: NodeJS.ProcessEnv): ExportChoice {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { traces: false, metrics: false };
  const asked = EXPORT_VARIABLES.some((name) => Boolean(env[name]?.trim()));
  const exporters = (name: string): string[] | undefined =>
    env[name]
      ?.split(',')
      .map((value) => value.trim())
      .filter(Boolean);
  const off = (list: string[] | undefined): boolean => list?.includes('none') ?? false;
  return { traces: asked && !off(exporters('OTEL_TRACES_EXPORTER')), metrics: asked && !off(exporters('OTEL_METRICS_EXPORTER')) };
}

/** Turn telemetry on if asked (the SDK is loaded only then): the telemetry to hand to what records, on or off. */
export async function startTelemetry(request: TelemetryRequest): Promise<Telemetry> {
  const choice = exportChoice(request.env ?? process.env);
  if (!choice.traces && !choice.metrics && !request.prometheus) return TELEMETRY_OFF;
  const { openTelemetry } = await import('./otel.js');
  return openTelemetry({
    ...choice,
    prometheus: request.prometheus,
    logger: request.logger,
    env: request.env ?? process.env,
    ...(request.replicaId !== undefined && { replicaId: request.replicaId }),
  });
}
