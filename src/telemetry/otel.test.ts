import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/index.js';
import { openTelemetry } from './otel.js';

describe('a 2026-07-28 HTTP request traced', () => {
  it('sends downstream in its trace while it is served, and what it leaves running after its end in a trace of its own', async () => {
    // Exports go to a loopback port nothing listens on: this test reads the trace context sent downstream, not the spans.
    const telemetry = openTelemetry({
      traces: true,
      metrics: false,
      prometheus: false,
      logger: silentLogger,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '60000' },
    });
    const sent: JSONRPCMessage[] = [];
    const inner: Transport = {
      start: () => Promise.resolve(),
      send: (message) => {
        sent.push(message);
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
    };
    const downstream = telemetry.clientTransport(inner, { serverName: 'fixture' });
    const traceId = randomBytes(16).toString('hex');
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'discover-all-tools', _meta: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } },
    };
    const request = { headers: {}, socket: { remoteAddress: '127.0.0.1', remotePort: 40000 } } as unknown as IncomingMessage;
    const served = telemetry.serveRequest(body, request);
    let answered!: () => void;
    const answer = new Promise<void>((resolve) => (answered = resolve));
    const leftBehind = served.run(async () => {
      await downstream.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      await answer;
      await downstream.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    });
    await Promise.resolve();
    served.end(200);
    answered();
    await leftBehind;
    const traceOf = (message: JSONRPCMessage | undefined): string | undefined =>
      ((message as { params?: { _meta?: { traceparent?: string } } } | undefined)?.params?._meta?.traceparent ?? '').split('-')[1];
    expect(sent).toHaveLength(2);
    expect(traceOf(sent[0])).toBe(traceId);
    expect(traceOf(sent[1])).toMatch(/^[0-9a-f]{32}$/);
    expect(traceOf(sent[1])).not.toBe(traceId);
    await telemetry.close();
  });
});
