// Telemetry over HTTP, on the built CLI: `serve --http --metrics` serves Prometheus text at /metrics
// behind the same token as /mcp, parsed here by a real parser, its histograms moving with calls; and
// a 2025 HTTP session's SERVER span takes its parent from the HTTP traceparent header.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { httpHarness, type HttpHarness } from '../helpers/http.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlpReceiver.js';

const TOKEN = 'metrics-test-token';
let harness: HttpHarness;
let receiver: OtlpReceiver;
beforeEach(async () => {
  harness = await httpHarness();
  receiver = await startOtlpReceiver();
  await writeServersYaml(harness.dirs.configDir, { echo: nodeServer(fixture('echo')) });
});
afterEach(async () => {
  await harness.teardown();
  await receiver.close();
});

async function scrape(token: string | undefined): Promise<{ status: number; text: string; families: PrometheusFamily[] }> {
  const url = new URL('/metrics', harness.gateway.url);
  const response = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  return { status: response.status, text, families: response.ok ? parsePrometheusTextFormat(text) : [] };
}

function family(families: PrometheusFamily[], name: string): PrometheusFamily | undefined {
  return families.find((each) => each.name === name);
}

// The parser reads one series per histogram (prom2json's shape): a histogram with one series is
// read whole, and a labelled one still shows its type and bucket boundaries.
function histogramCount(families: PrometheusFamily[], name: string): number {
  const found = family(families, name);
  if (!found) return 0;
  expect(found.type).toBe('HISTOGRAM');
  return Number(found.metrics[0]?.buckets?.['+Inf'] ?? 0);
}

describe('serve --http --metrics', () => {
  it('serves Prometheus text at /metrics behind the token, its histograms moving with calls', async () => {
    await harness.start(['--metrics', '--token', TOKEN, '--equip', 'all']);
    const { client } = await harness.connect({ token: TOKEN });
    expect((await scrape(undefined)).status).toBe(401);
    expect((await scrape('wrong')).status).toBe(401);

    const { tools } = await client.listTools();
    const echo = tools.find((tool) => tool.name.endsWith('echo') && tool.name !== 'echo')!.name;
    const first = await scrape(TOKEN);
    // The process's resource says which program runs, never its arguments: --token is one.
    expect(first.text).not.toContain(TOKEN);
    expect(family(first.families, 'target_info')?.metrics[0]?.labels?.service_name).toBe('loadout');
    const before = first.families;
    for (const text of ['a', 'b', 'c']) expect(textOf(await client.callTool({ name: echo, arguments: { text } }))).toBe(text);
    for (const query of ['echo', 'say it back']) await client.callTool({ name: 'discover-all-tools', arguments: { query } });
    const after = (await scrape(TOKEN)).families;

    // The conventions' histograms, with their advised bucket boundaries (seconds).
    for (const name of ['mcp_server_operation_duration', 'mcp_client_operation_duration']) {
      expect(family(after, name)?.type, name).toBe('HISTOGRAM');
      expect(Object.keys(family(after, name)!.metrics[0]!.buckets!).sort((a, b) => Number(a) - Number(b))).toEqual([
        ...['0.01', '0.02', '0.05', '0.1', '0.2', '0.5', '1', '2', '5', '10', '30', '60', '120', '300'],
        '+Inf',
      ]);
    }
    // Two searches: the search histogram (one series) counts two more.
    expect(histogramCount(after, 'loadout_search_duration') - histogramCount(before, 'loadout_search_duration')).toBe(2);
    // Three downstream calls of echo.
    const calls = (families: PrometheusFamily[]) =>
      Number(
        family(families, 'loadout_tool_calls_total')?.metrics.find((sample) => sample.labels?.gen_ai_tool_name === 'echo')?.value ?? 0,
      );
    expect(family(after, 'loadout_tool_calls_total')?.type).toBe('COUNTER');
    expect(calls(after) - calls(before)).toBe(3);
    expect(Number(family(after, 'loadout_downstream_connected')?.metrics[0]?.value)).toBe(1);
    expect(Number(family(after, 'loadout_catalog_tools')?.metrics[0]?.value)).toBeGreaterThan(0);
    const equipped = family(after, 'loadout_tools_equipped')?.metrics.find((sample) => sample.labels?.loadout_principal === 'sessions');
    expect(Number(equipped?.value)).toBeGreaterThan(0);
  });

  it('parents a 2025 HTTP session request on the HTTP traceparent header', async () => {
    await harness.start(['--equip', 'all'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRICS_EXPORTER: 'none',
    });
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const transport = new StreamableHTTPClientTransport(new URL(harness.gateway.url), {
      requestInit: { headers: { traceparent: `00-${traceId}-${parent}-01` } },
    });
    const client = new Client({ name: 'traced-http', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const echo = tools.find((tool) => tool.name.endsWith('echo') && tool.name !== 'echo')!.name;
      expect(textOf(await client.callTool({ name: echo, arguments: { text: 'hi' } }))).toBe('hi');
      const served = () => receiver.spans.filter((span) => span.kind === SPAN_KIND.server && span.name === `tools/call ${echo}`);
      await eventually(() => served().length === 1, 10_000, 'the SERVER span');
      expect(served()[0]).toMatchObject({ traceId, parentSpanId: parent });
      expect(served()[0]!.attributes).toMatchObject({ 'network.transport': 'tcp', 'network.protocol.name': 'http' });
      expect(typeof served()[0]!.attributes['mcp.session.id']).toBe('string');
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });
});
