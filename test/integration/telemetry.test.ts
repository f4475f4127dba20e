// Telemetry end to end, on the built CLI: a session's spans (discover, build, equip, calls, a tool
// error, a downstream crash) reach an OTLP/HTTP receiver in this process with the MCP conventions'
// names, kinds, parents, attributes and status, in both client eras; a downstream server that
// traces joins the client's trace; what a request leaves running after its answer starts a trace of
// its own; a call of a tool the caller's policy hides is measured as one of a made-up name; a collector
// that is down costs one warning; telemetry off loads no OpenTelemetry module at all.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml, type GatewayProcess } from '../helpers/gateway.js';
import { freePort } from '../helpers/http.js';
import { SPAN_KIND, STATUS_ERROR, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlpReceiver.js';

const sandbox = useGatewaySandbox();
let receiver: OtlpReceiver;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
});

// Export at once (50 ms batches) as OTLP/HTTP JSON to `endpoint`.
function otelEnv(endpoint: string, service?: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_METRICS_EXPORTER: 'none',
    ...(service && { OTEL_SERVICE_NAME: service }),
  };
}

async function tracedServers(): Promise<void> {
  await writeServersYaml(sandbox.dirs.configDir, {
    tracing: nodeServer(fixture('tracingServer'), { env: otelEnv(receiver.url, 'tracing-fixture') }),
  });
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

// The tool of `gateway` whose exposed name ends with `tool`.
async function exposedName(gateway: GatewayProcess, tool: string): Promise<string> {
  const { tools } = await gateway.client.listTools();
  const found = tools.find((each) => each.name.endsWith(tool) && each.name !== tool);
  if (!found) throw new Error(`no exposed tool for ${tool}: ${tools.map((each) => each.name).join(', ')}`);
  return found.name;
}

function one(spans: ReceivedSpan[], what: string, match: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  expect(found, what).toHaveLength(1);
  return found[0]!;
}

describe.each(['legacy', 'modern'] as const)('a traced session, %s client over stdio', (era) => {
  it('exports one trace per client call, from the client through loadout to the downstream server', async () => {
    await tracedServers();
    const gateway = await sandbox.start({
      env: otelEnv(receiver.url),
      ...(era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    });
    const { client } = gateway;
    // Each call carries the client's own span as its parent, as a tracing agent's would.
    const traceId = hex(16);
    const parents: Record<string, string> = {};
    const call = async (step: string, name: string, args: Record<string, unknown>) => {
      parents[step] = hex(8);
      return client
        .callTool({ name, arguments: args, _meta: { traceparent: `00-${traceId}-${parents[step]}-01` } })
        .catch((error: unknown) => ({ isError: true, content: [{ type: 'text', text: String(error) }] }));
    };

    // As clients do, it lists the tools first.
    await client.listTools();
    await call('discover', 'discover-all-tools', { query: 'echo text' });
    const built = await call('build', 'build-toolset', {
      name: 'traced',
      tools: ['tracing.echo', 'tracing.fail', 'tracing.crash'],
      equip: true,
    });
    expect(textOf(built)).toContain("Saved toolset 'traced' with 3 tools");
    await call('equip', 'equip-toolset', { name: 'traced' });
    const echoed = await call('echo', await exposedName(gateway, 'echo'), { text: 'hello' });
    expect(textOf(echoed)).toBe('hello');
    const failed = await call('fail', await exposedName(gateway, 'fail'), {});
    expect(failed.isError).toBe(true);
    const crashed = await call('crash', await exposedName(gateway, 'crash'), {});
    expect(crashed.isError).toBe(true);
    // Said as without telemetry: the server's exit is read off its own transport, under telemetry's.
    expect(textOf(crashed)).toContain('its process exited with code 1');
    // A JSON-RPC error answer.
    await expect(client.getPrompt({ name: 'no-such-prompt' })).rejects.toThrow(/not listed/);

    const { spans } = receiver;
    const loadout = (kind: number, name: string) =>
      spans.filter((span) => span.service === 'loadout' && span.kind === kind && span.name === name);
    await eventually(
      () =>
        loadout(SPAN_KIND.server, 'tools/call ' + 'discover-all-tools').length === 1 &&
        spans.some((span) => span.name.includes('crash') && span.service === 'loadout' && span.kind === SPAN_KIND.server) &&
        loadout(SPAN_KIND.server, 'prompts/get no-such-prompt').length === 1,
      10_000,
      'the session spans',
    );
    await eventually(() => spans.some((span) => span.service === 'tracing-fixture'), 10_000, 'the fixture span');

    // Every SERVER span of a call is a child of the client's span, in the client's trace.
    const serverSpan = (step: string): ReceivedSpan =>
      one(
        spans,
        `SERVER span of ${step}`,
        (span) => span.service === 'loadout' && span.kind === SPAN_KIND.server && span.parentSpanId === parents[step],
      );
    for (const step of Object.keys(parents)) {
      const span = serverSpan(step);
      expect(span.traceId).toBe(traceId);
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'network.transport': 'pipe',
        'mcp.protocol.version': era === 'modern' ? '2026-07-28' : expect.stringMatching(/^2025-/),
      });
      expect(span.name).toBe(`tools/call ${span.attributes['gen_ai.tool.name']}`);
      expect(typeof span.attributes['jsonrpc.request.id']).toBe('string');
    }

    // Meta-tools: a child span that says what they did (the query's length, never its text).
    const metaSpan = (step: string, tool: string): ReceivedSpan =>
      one(
        spans,
        `meta-tool span of ${step}`,
        (span) => span.kind === SPAN_KIND.internal && span.parentSpanId === serverSpan(step).spanId && span.name === `meta-tool ${tool}`,
      );
    const discover = metaSpan('discover', 'discover-all-tools');
    expect(discover.attributes).toMatchObject({
      'loadout.meta_tool.name': 'discover-all-tools',
      'loadout.search.query.length': 'echo text'.length,
    });
    expect(discover.attributes['loadout.search.result.count']).toBeGreaterThan(0);
    expect(discover.attributes).not.toHaveProperty('loadout.search.query.text');
    expect(metaSpan('build', 'build-toolset').attributes).toMatchObject({
      'loadout.toolset.name': 'traced',
      'loadout.toolset.tool.count': 3,
    });
    expect(metaSpan('equip', 'equip-toolset').attributes).toMatchObject({
      'loadout.toolset.name': 'traced',
      'loadout.toolset.tool.count': 3,
    });

    // A forwarded call: SERVER → CLIENT (to the downstream, context in its _meta) → the fixture's own SERVER span.
    // (A call that starts its server lazily also has the start's initialize under it.)
    const clientSpan = (step: string): ReceivedSpan =>
      one(
        spans,
        `CLIENT span of ${step}`,
        (span) => span.kind === SPAN_KIND.client && span.name.startsWith('tools/call') && span.parentSpanId === serverSpan(step).spanId,
      );
    const echoClient = clientSpan('echo');
    expect(echoClient).toMatchObject({ name: 'tools/call echo', traceId, status: { code: 0 } });
    expect(echoClient.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'loadout.server.name': 'tracing',
      'network.transport': 'pipe',
    });
    const downstream = one(
      spans,
      'the fixture span of echo',
      (span) => span.service === 'tracing-fixture' && span.name === 'tools/call echo',
    );
    expect(downstream).toMatchObject({ traceId, parentSpanId: echoClient.spanId, kind: SPAN_KIND.server });

    // A tool error: error.type tool_error and ERROR status, on both sides of loadout.
    for (const span of [serverSpan('fail'), clientSpan('fail')]) {
      expect(span.attributes['error.type']).toBe('tool_error');
      expect(span.status.code).toBe(STATUS_ERROR);
    }
    // A downstream crash: the CLIENT span ends with the connection, and the client's call fails.
    expect(clientSpan('crash').attributes['error.type']).toBe('connection_closed');
    expect(clientSpan('crash').status.code).toBe(STATUS_ERROR);
    expect(serverSpan('crash').status.code).toBe(STATUS_ERROR);
    expect(serverSpan('crash').attributes['error.type']).toBeDefined();
    // A JSON-RPC error: its code is error.type and rpc.response.status_code.
    const refused = loadout(SPAN_KIND.server, 'prompts/get no-such-prompt')[0]!;
    expect(refused.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
    expect(refused.status.code).toBe(STATUS_ERROR);
  });
  it('records no span of a call the client did not sample, and tells the downstream server so', async () => {
    await tracedServers();
    const gateway = await sandbox.start({
      env: otelEnv(receiver.url),
      args: ['--equip', 'all'],
      ...(era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    });
    const echo = await exposedName(gateway, 'echo');
    // The unsampled call first: whatever it exported would leave before the sampled call's spans.
    const [unsampled, sampled] = [hex(16), hex(16)];
    for (const [traceId, flags] of [
      [unsampled, '00'],
      [sampled, '01'],
    ] as const) {
      const answer = await gateway.client.callTool({
        name: echo,
        arguments: { text: flags },
        _meta: { traceparent: `00-${traceId}-${hex(8)}-${flags}` },
      });
      expect(textOf(answer)).toBe(flags);
    }
    const { spans } = receiver;
    const ofTrace = (traceId: string, service: string) => spans.filter((span) => span.traceId === traceId && span.service === service);
    await eventually(
      () => ofTrace(sampled, 'loadout').length === 2 && ofTrace(sampled, 'tracing-fixture').length === 1,
      10_000,
      "the sampled call's spans",
    );
    expect(
      ofTrace(sampled, 'loadout')
        .map((span) => span.kind)
        .sort(),
    ).toEqual([SPAN_KIND.server, SPAN_KIND.client].sort());
    expect(ofTrace(unsampled, 'loadout')).toEqual([]);
    // The fixture was told the trace and that it is not sampled: it started no trace of its own for the call.
    expect(spans.filter((span) => span.service === 'tracing-fixture')).toHaveLength(1);
  });
});

describe('a stdio caller whose policy hides a server', () => {
  it("measures a call of the hidden server's tool as one of a made-up name", async () => {
    await writeFile(
      path.join(sandbox.dirs.configDir, 'servers.yaml'),
      stringify({
        servers: { echo: nodeServer(fixture('echo')), secret: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'sec_' } }) },
        policy: { local: { subject: 'dev' }, rules: [{ everyone: true, servers: ['echo'] }] },
      }),
    );
    const gateway = await sandbox.start({
      env: { ...otelEnv(receiver.url), OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '200' },
      args: ['--equip', 'all'],
    });
    const echo = await exposedName(gateway, 'echo');
    expect(textOf(await gateway.client.callTool({ name: echo, arguments: { text: 'hi' } }))).toBe('hi');
    for (const name of ['secret_sec_echo', `made_up_${hex(4)}`])
      expect((await gateway.client.callTool({ name, arguments: { text: 'x' } })).isError, name).toBe(true);
    const toolNames = () =>
      new Set(
        receiver.metricPoints
          .filter((point) => point.name === 'mcp.server.operation.duration' && point.attributes['mcp.method.name'] === 'tools/call')
          .map((point) => point.attributes['gen_ai.tool.name']),
      );
    await eventually(() => toolNames().has(echo) && toolNames().has('_OTHER'), 10_000, 'the tools/call measurements exported');
    expect([...toolNames()].sort()).toEqual(['_OTHER', echo].sort());
  });
});

describe('telemetry problems and telemetry off', () => {
  it('warns once on stderr when the collector is unreachable, and every call still succeeds', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const gateway = await sandbox.start({ env: otelEnv(`http://127.0.0.1:${await freePort()}`), args: ['--equip', 'all'] });
    const echo = await exposedName(gateway, 'echo');
    const warnings = () =>
      gateway
        .stderr()
        .split('\n')
        .filter((line) => line.includes('[telemetry]'));
    await gateway.client.callTool({ name: echo, arguments: { text: 'one' } });
    await eventually(() => warnings().length > 0, 15_000, 'the telemetry warning');
    for (const text of ['two', 'three']) expect(textOf(await gateway.client.callTool({ name: echo, arguments: { text } }))).toBe(text);
    await gateway.close();
    expect(warnings()).toHaveLength(1);
    // The last spans' flush at shutdown does not wait out an export timeout.
    expect(gateway.stderr()).not.toContain('shutdown took too long');
  });

  it('loads no OpenTelemetry module while off, and the SDK when on', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const modulesLoaded = async (env: Record<string, string>): Promise<string[]> => {
      const log = path.join(sandbox.dirs.root, `modules-${hex(4)}.log`);
      const gateway = await sandbox.start({
        env: { ...env, NODE_OPTIONS: `--import=${fixture('moduleLog')}`, LOADOUT_TEST_MODULE_LOG: log },
        args: ['--equip', 'all'],
      });
      expect(textOf(await gateway.client.callTool({ name: await exposedName(gateway, 'echo'), arguments: { text: 'hi' } }))).toBe('hi');
      await gateway.close();
      return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    };
    const off = await modulesLoaded({});
    expect(
      off.some((url) => url.includes('/dist/bundle/loadout.js')),
      'the log sees loadout itself',
    ).toBe(true);
    expect(off.filter((url) => url.includes('@opentelemetry'))).toEqual([]);
    const on = await modulesLoaded(otelEnv(receiver.url));
    expect(on.some((url) => url.includes('@opentelemetry/sdk-trace-node'))).toBe(true);
  });
});

describe('a 2026-07-28 client over stdio', () => {
  it("continues the client's trace from the first request after server/discover on", async () => {
    await tracedServers();
    const gateway = await sandbox.start({
      env: otelEnv(receiver.url),
      args: ['--equip', 'all'],
      versionNegotiation: { mode: 'auto' as const },
    });
    // The connection opened with server/discover: this call is the request that pins it.
    const traceId = hex(16);
    const parents = [hex(8), hex(8)];
    for (const parent of parents) {
      const answer = await gateway.client.callTool({
        name: 'tracing_echo',
        arguments: { text: 'first' },
        _meta: { traceparent: `00-${traceId}-${parent}-01` },
      });
      expect(textOf(answer)).toBe('first');
    }
    const { spans } = receiver;
    const served = (parent: string) =>
      spans.find((span) => span.service === 'loadout' && span.kind === SPAN_KIND.server && span.parentSpanId === parent);
    const forwarded = (server: ReceivedSpan) =>
      spans.find((span) => span.kind === SPAN_KIND.client && span.name === 'tools/call echo' && span.parentSpanId === server.spanId);
    await eventually(() => parents.every((parent) => served(parent) && forwarded(served(parent)!)), 10_000, 'both calls traced');
    for (const parent of parents) {
      const server = served(parent)!;
      expect(server).toMatchObject({ traceId, name: 'tools/call tracing_echo' });
      expect(server.attributes['mcp.protocol.version']).toBe('2026-07-28');
      expect(forwarded(server)!.traceId).toBe(traceId);
    }
  });
});

describe('downstream work a request leaves behind after its answer', () => {
  it('goes in a trace of its own, whether or not another traced request is in flight then', async () => {
    const gates = { early: path.join(sandbox.dirs.root, 'gate-early'), late: path.join(sandbox.dirs.root, 'gate-late') };
    await writeServersYaml(sandbox.dirs.configDir, {
      early: nodeServer(fixture('gatedStart'), { env: { GATE_FILE: gates.early } }),
      late: nodeServer(fixture('gatedStart'), { env: { GATE_FILE: gates.late } }),
      hang: nodeServer(fixture('hang')),
    });
    const { client } = await sandbox.start({ env: otelEnv(receiver.url) });
    const [discoverTrace, callTrace] = [hex(16), hex(16)];
    // The first request starts discovery in its own context, and is answered after the first-contact
    // wait with the two gated servers still starting: the rest of their discovery comes after its answer.
    const discovered = await client.callTool({
      name: 'discover-all-tools',
      arguments: {},
      _meta: { traceparent: `00-${discoverTrace}-${hex(8)}-01` },
    });
    expect(textOf(discovered)).toMatch(/hang\.hang[^]*early: discovery pending[^]*late: discovery pending/);
    const { spans } = receiver;
    const sentTo = (server: string) =>
      spans.filter(
        (span) => span.service === 'loadout' && span.kind === SPAN_KIND.client && span.attributes['loadout.server.name'] === server,
      );
    const listed = (server: string) => sentTo(server).some((span) => span.attributes['mcp.method.name'] === 'tools/list');
    // No traced request is in flight when the early server's start goes on.
    await writeFile(gates.early, '');
    await eventually(() => listed('early'), 10_000, "the early server's listing");
    // A meta-tool call is in flight (call-tool of a tool that never answers) when the late one's does:
    // the ping's answer says loadout is handling that call already (a session reads in order).
    const abort = new AbortController();
    const inFlight = client
      .callTool(
        { name: 'call-tool', arguments: { tool: 'hang.hang', arguments: {} }, _meta: { traceparent: `00-${callTrace}-${hex(8)}-01` } },
        { signal: abort.signal },
      )
      .catch(() => undefined);
    await client.ping();
    await writeFile(gates.late, '');
    await eventually(() => listed('late'), 10_000, "the late server's listing");
    abort.abort('done');
    await inFlight;

    // What discovery sent while the first request was being answered is in its trace, under its
    // SERVER span (discovery starts before the meta-tool's own span); what it sent after that is a
    // root of its own, in neither client's trace.
    const answered = one(spans, 'the discover-all-tools SERVER span', (span) => span.name === 'tools/call discover-all-tools');
    expect(answered.traceId).toBe(discoverTrace);
    const traceOf = (traceId: string) =>
      traceId === discoverTrace ? 'discover-all-tools' : traceId === callTrace ? 'call-tool' : 'its own';
    for (const server of ['early', 'late']) {
      const before = sentTo(server).filter((span) => span.startNs < answered.endNs);
      const after = sentTo(server).filter((span) => span.startNs >= answered.endNs);
      expect(before.length, `${server}: requests sent before the answer`).toBeGreaterThan(0);
      expect(after.map((span) => span.attributes['mcp.method.name'])).toContain('tools/list');
      for (const span of before)
        expect(span, `${server}: ${span.name}`).toMatchObject({ traceId: discoverTrace, parentSpanId: answered.spanId });
      for (const span of after)
        expect({ trace: traceOf(span.traceId), parentSpanId: span.parentSpanId }, `${server}: ${span.name}`).toEqual({
          trace: 'its own',
          parentSpanId: '',
        });
    }
  });
});
