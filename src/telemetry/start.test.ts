import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger, type Logger } from '../shared/index.js';
import { exportChoice, startTelemetry, TELEMETRY_OFF } from './index.js';

describe('exportChoice', () => {
  it('exports nothing unless an OTEL_* variable names an exporter or an endpoint', () => {
    expect(exportChoice({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toEqual({ traces: false, metrics: false });
    expect(exportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({ traces: true, metrics: true });
  });

  it('leaves out what an exporter variable sets to none, and everything under OTEL_SDK_DISABLED=true', () => {
    expect(exportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' })).toEqual({
      traces: true,
      metrics: false,
    });
    expect(exportChoice({ OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'otlp' })).toEqual({ traces: false, metrics: true });
    expect(exportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toEqual({
      traces: false,
      metrics: false,
    });
  });
});

describe('startTelemetry', () => {
  it('stays off, handing back what each hook is given, when nothing asks for telemetry', async () => {
    const started = await startTelemetry({ prometheus: false, logger: silentLogger, env: {} });
    expect(started).toBe(TELEMETRY_OFF);
    const transport = { start: () => Promise.resolve(), send: () => Promise.resolve(), close: () => Promise.resolve() };
    expect(started.serverTransport(transport, { transport: 'pipe' })).toBe(transport);
    expect(started.clientTransport(transport, { serverName: 'echo' })).toBe(transport);
    expect(started.servePrometheus).toBeUndefined();
  });

  it('refuses a console exporter, which would write to stdout, with one warning', async () => {
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_fields: object | string, message?: string) => void warnings.push(message ?? '') };
    const started = await startTelemetry({ prometheus: false, logger, env: { OTEL_TRACES_EXPORTER: 'otlp, console' } });
    expect(started).toBe(TELEMETRY_OFF);
    expect(warnings).toEqual([expect.stringContaining('OTEL_TRACES_EXPORTER=console would write to stdout')]);
  });

  // Last: it replaces modules, which the tests above import as they are.
  describe('with the OpenTelemetry module replaced', () => {
    afterEach(() => {
      vi.doUnmock('./otel.js');
      vi.unstubAllEnvs();
      vi.resetModules();
    });

    it('loads OpenTelemetry only when asked, reading process.env unless given an env', async () => {
      vi.resetModules();
      const loaded = vi.fn();
      vi.doMock('./otel.js', () => {
        loaded();
        return { openTelemetry: () => ({ ...TELEMETRY_OFF, enabled: true }) };
      });
      const fresh = await import('./index.js');
      for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_SDK_DISABLED'])
        vi.stubEnv(name, '');
      expect(await fresh.startTelemetry({ prometheus: false, logger: silentLogger })).toBe(fresh.TELEMETRY_OFF);
      expect(loaded).not.toHaveBeenCalled();
      // An exporter named in process.env, the env read by default, turns it on.
      vi.stubEnv('OTEL_TRACES_EXPORTER', 'otlp');
      const started = await fresh.startTelemetry({ prometheus: false, logger: silentLogger });
      expect(started.enabled).toBe(true);
      expect(loaded).toHaveBeenCalledTimes(1);
    });
  });
});
