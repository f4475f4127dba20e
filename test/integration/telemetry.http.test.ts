// Telemetry over HTTP, on the built CLI: `serve --http --metrics` serves Prometheus text at /metrics
// on a loopback listener of its own (never the MCP port), parsed here by a real parser, its
// histograms moving with calls, rate-limit refusals counted by limit; a
// 2025 HTTP session's SERVER span takes its parent from the HTTP traceparent header; and in both
// eras a failure inside a 200 answer (a JSON-RPC error, an isError result) marks the SERVER span,
// which says where the client connects from, while a tool name the client made up, or one its
// policy hides, labels no metric.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import path from 'node:path';
import { stringify } from 'yaml';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { httpHarness, type HttpHarness } from '../helpers/http.js';
import { SPAN_KIND, STATUS_ERROR, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlpReceiver.js';

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

// Where the gateway said its metrics listener is (`serving metrics at URL`).
function metricsUrl(): string {
  const url = /serving metrics at (\S+)/.exec(harness.gateway.output())?.[1];
  if (!url) throw new Error(`no metrics listener announced:\n${harness.gateway.output()}`);
  return url;
}

function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers: { Host: host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}

async function scrape(): Promise<{ status: number; text: string; families: PrometheusFamily[] }> {
  const response = await fetch(metricsUrl());
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
  it('serves Prometheus text at /metrics on a loopback listener of its own, its histograms moving with calls', async () => {
    await harness.start(['--metrics', '--metrics-port', '0', '--token', TOKEN, '--equip', 'all']);
    const { client } = await harness.connect({ token: TOKEN });
    // Not on the MCP port, whatever token a caller holds: the metrics are the fleet's, not a caller's.
    const onMcpPort = await fetch(new URL('/metrics', harness.gateway.url), { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(onMcpPort.status).toBe(404);
    expect(await onMcpPort.text()).not.toContain('mcp_server_operation');
    expect(new URL(metricsUrl()).hostname).toBe('127.0.0.1');
    // A page that rebinds its own name to loopback is still refused by its Host (node:http: fetch cannot set Host).
    expect(await statusWithHost(metricsUrl(), 'attacker.example')).toBe(403);
    expect(await statusWithHost(metricsUrl(), new URL(metricsUrl()).host)).toBe(200);

    const { tools } = await client.listTools();
    const echo = tools.find((tool) => tool.name.endsWith('echo') && tool.name !== 'echo')!.name;
    const first = await scrape();
    expect(first.status).toBe(200);
    // The process's resource says which program runs, never its arguments: --token is one.
    expect(first.text).not.toContain(TOKEN);
    expect(family(first.families, 'target_info')?.metrics[0]?.labels?.service_name).toBe('loadout');
    // Each replica's series are its own: service.instance.id is its replica id (a nanoid).
    expect(family(first.families, 'target_info')?.metrics[0]?.labels?.service_instance_id).toMatch(/^[\w-]{21}$/);
    const before = first.families;
    for (const text of ['a', 'b', 'c']) expect(textOf(await client.callTool({ name: echo, arguments: { text } }))).toBe(text);
    for (const query of ['echo', 'say it back']) await client.callTool({ name: 'discover-all-tools', arguments: { query } });
    const after = (await scrape()).families;

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

describe.each(['legacy', 'modern'] as const)('SERVER spans of a %s client over HTTP', (era) => {
  it('mark a JSON-RPC error or a tool error inside a 200 answer, say where the client is, and keep made-up and hidden tool names off metrics', async () => {
    // `secret` is hidden from every caller by policy: a call of its tool must measure as one of a made-up name.
    await writeFile(
      path.join(harness.dirs.configDir, 'servers.yaml'),
      stringify({
        servers: {
          tracing: nodeServer(fixture('tracingServer')),
          secret: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'sec_' } }),
        },
        policy: { rules: [{ everyone: true, servers: ['tracing'] }] },
      }),
    );
    await harness.start(['--token', TOKEN, '--equip', 'all'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
    });
    const client = new Client(
      { name: 'answers-test', version: '1.0.0' },
      { capabilities: {}, ...(era === 'modern' && { versionNegotiation: { mode: 'auto' as const } }) },
    );
    const transport = new StreamableHTTPClientTransport(new URL(harness.gateway.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const named = (tool: string) => tools.find((each) => each.name.endsWith(`_${tool}`))!.name;
      const [echo, fail] = [named('echo'), named('fail')];
      const madeUp = `made_up_${randomBytes(4).toString('hex')}`;
      expect(textOf(await client.callTool({ name: echo, arguments: { text: 'hi' } }))).toBe('hi');
      expect((await client.callTool({ name: fail, arguments: {} })).isError).toBe(true);
      expect((await client.callTool({ name: madeUp, arguments: {} })).isError).toBe(true);
      const hidden = 'secret_sec_echo';
      expect((await client.callTool({ name: hidden, arguments: { text: 'x' } })).isError).toBe(true);
      await expect(client.getPrompt({ name: 'no-such-prompt' })).rejects.toThrow(/not listed/);

      const served = (name: string): ReceivedSpan | undefined =>
        receiver.spans.find((span) => span.service === 'loadout' && span.kind === SPAN_KIND.server && span.name === name);
      const names = [
        `tools/call ${echo}`,
        `tools/call ${fail}`,
        `tools/call ${madeUp}`,
        `tools/call ${hidden}`,
        'prompts/get no-such-prompt',
      ];
      await eventually(() => names.every((name) => served(name)), 10_000, 'the SERVER spans');
      const version = era === 'modern' ? '2026-07-28' : expect.stringMatching(/^2025-/);

      // A plain answer: no error; the client's address and port, as the conventions' network attributes.
      const ok = served(`tools/call ${echo}`)!;
      expect(ok.status.code).not.toBe(STATUS_ERROR);
      expect(ok.attributes).not.toHaveProperty('error.type');
      expect(ok.attributes).toMatchObject({ 'client.address': '127.0.0.1', 'mcp.protocol.version': version });
      expect(ok.attributes['client.port']).toEqual(expect.any(Number));
      // An isError result (HTTP 200): error.type tool_error.
      for (const name of [`tools/call ${fail}`, `tools/call ${madeUp}`]) {
        expect(served(name)!.attributes['error.type'], name).toBe('tool_error');
        expect(served(name)!.status.code, name).toBe(STATUS_ERROR);
      }
      // A JSON-RPC error (HTTP 200 too): its code is error.type and rpc.response.status_code.
      const refused = served('prompts/get no-such-prompt')!;
      expect(refused.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
      expect(refused.status.code).toBe(STATUS_ERROR);
      // The span keeps the name the client gave; the metric labels it _OTHER, a name loadout has by its own.
      expect(served(`tools/call ${madeUp}`)!.attributes['gen_ai.tool.name']).toBe(madeUp);
      const labelled = () =>
        new Set(
          receiver.metricPoints
            .filter((point) => point.name === 'mcp.server.operation.duration')
            .map((point) => point.attributes['gen_ai.tool.name']),
        );
      await eventually(() => labelled().has('_OTHER'), 10_000, 'the operation metric exported');
      expect(labelled()).toContain(echo);
      expect(labelled()).not.toContain(madeUp);
      // A name the caller's policy hides is measured as a made-up one: the same _OTHER, error.type tool_error.
      expect(labelled()).not.toContain(hidden);
      const hiddenCall = () =>
        receiver.metricPoints.some(
          (point) =>
            point.name === 'mcp.server.operation.duration' &&
            point.attributes['gen_ai.tool.name'] === '_OTHER' &&
            point.attributes['error.type'] === 'tool_error',
        );
      expect(hiddenCall()).toBe(true);
      // So with a prompt: its span names it, its metric says _OTHER for one no server has.
      expect(refused.attributes['gen_ai.prompt.name']).toBe('no-such-prompt');
      const prompts = () =>
        new Set(
          receiver.metricPoints
            .filter((point) => point.name === 'mcp.server.operation.duration' && point.attributes['mcp.method.name'] === 'prompts/get')
            .map((point) => point.attributes['gen_ai.prompt.name']),
        );
      await eventually(() => prompts().size > 0, 10_000, 'the prompts/get measurement exported');
      expect([...prompts()]).toEqual(['_OTHER']);
    } finally {
      if (era === 'legacy') await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });
});

describe('a 2026-07-28 call over a rate limit', () => {
  it('has error.type -32029 (the JSON-RPC code its 429 carries) wherever it is refused', async () => {
    await writeFile(
      path.join(harness.dirs.configDir, 'servers.yaml'),
      stringify({ servers: { echo: nodeServer(fixture('echo')) }, limits: { server_calls_per_minute: 1 } }),
    );
    await harness.start(['--token', TOKEN, '--equip', 'all', '--metrics', '--metrics-port', '0'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRICS_EXPORTER: 'none',
    });
    // A plain call is answered in front of the SDK handler; one with a progress token goes to it,
    // and its refusal is answered just before it.
    const post = async (id: number, progress: boolean): Promise<number> => {
      const response = await fetch(harness.gateway.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-method': 'tools/call',
          'mcp-name': 'echo_echo',
          'mcp-protocol-version': '2026-07-28',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'echo_echo',
            arguments: { text: 'x' },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
              ...(progress && { progressToken: 'p' }),
            },
          },
        }),
      });
      await response.text();
      return response.status;
    };
    expect(await post(1, false)).toBe(200);
    expect(await post(2, false)).toBe(429);
    expect(await post(3, true)).toBe(429);
    const served = (id: string) =>
      receiver.spans.find((span) => span.kind === SPAN_KIND.server && span.attributes['jsonrpc.request.id'] === id);
    await eventually(() => ['1', '2', '3'].every((id) => served(id)), 10_000, 'the SERVER spans');
    expect(served('1')!.attributes).not.toHaveProperty('error.type');
    for (const id of ['2', '3']) {
      expect(served(id)!.attributes, `request ${id}`).toMatchObject({ 'error.type': '-32029', 'rpc.response.status_code': '-32029' });
      expect(served(id)!.status.code).toBe(STATUS_ERROR);
    }
    // Each refusal is counted once, by the limit that refused it.
    const refusals = family((await scrape()).families, 'loadout_rate_limit_refusals_total');
    expect(refusals?.type).toBe('COUNTER');
    expect(refusals?.metrics.map((sample) => [sample.labels?.loadout_limit_kind, Number(sample.value)])).toEqual([
      ['server_calls_per_minute', 2],
    ]);
  });
});
