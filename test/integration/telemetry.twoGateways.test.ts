// Two gateways in one process, each handed a telemetry of its own (`--metrics`' Prometheus
// reader): each telemetry reads its own gateway's gauges and measures its own gateway's downstream
// connections, however the starts interleave. No telemetry is kept in the process for the last
// gateway to take over.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/config/index.js';
import { createGateway, type Gateway } from '../../src/gateway/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { startTelemetry, type Telemetry } from '../../src/telemetry/index.js';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  // Gateways before their telemetry and dirs, in the reverse of their opening.
  for (const each of opened.splice(0).reverse()) await each.close();
});

async function tempDirs(servers: Record<string, unknown>): Promise<TempDirs> {
  const dirs = await makeTempDirs();
  opened.push({ close: () => dirs.cleanup() });
  await writeServersYaml(dirs.configDir, servers);
  return dirs;
}

async function prometheusTelemetry(): Promise<{ telemetry: Telemetry; scrape(): Promise<PrometheusFamily[]> }> {
  // No OTEL_* variable: the Prometheus reader alone, nothing exported.
  const telemetry = await startTelemetry({ prometheus: true, logger: silentLogger, env: {} });
  opened.push(telemetry);
  const serve = telemetry.servePrometheus!;
  const listener: Server = createServer((req, res) => serve(req, res));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  opened.push({ close: () => new Promise<void>((resolve) => listener.close(() => resolve())) });
  const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/metrics`;
  return { telemetry, scrape: async () => parsePrometheusTextFormat(await (await fetch(url)).text()) };
}

async function gatewayOn(dirs: TempDirs, telemetry: Telemetry): Promise<Gateway> {
  const gateway = await createGateway({
    paths: resolvePaths({ configDir: dirs.configDir, dataDir: dirs.dataDir }),
    logger: silentLogger,
    telemetry,
  });
  opened.push(gateway);
  return gateway;
}

const valueOf = (families: PrometheusFamily[], name: string): number | undefined => {
  const value = families.find((family) => family.name === name)?.metrics[0]?.value;
  return value === undefined ? undefined : Number(value);
};

// The servers each telemetry saw a downstream connection start to.
const startedServers = (families: PrometheusFamily[]): string[] =>
  (families.find((family) => family.name.startsWith('loadout_downstream_starts'))?.metrics ?? [])
    .map((metric) => metric.labels?.loadout_server_name ?? '')
    .sort();

describe('two gateways in one process', () => {
  it('each keep their own telemetry: their own gauges read, their own downstream connections measured', async () => {
    const one = await tempDirs({ alpha: nodeServer(fixture('echo')) });
    const two = await tempDirs({ beta: nodeServer(fixture('echo')), gamma: nodeServer(fixture('echo')) });
    // Both telemetries start before either gateway: a process-wide one would be the second's for both.
    const first = await prometheusTelemetry();
    const second = await prometheusTelemetry();
    const gatewayOne = await gatewayOn(one, first.telemetry);
    const gatewayTwo = await gatewayOn(two, second.telemetry);
    await Promise.all([gatewayOne.context.ready(), gatewayTwo.context.ready()]);
    const toolsOne = gatewayOne.context.catalog.current.visible().length;
    const toolsTwo = gatewayTwo.context.catalog.current.visible().length;
    expect(toolsOne).toBeGreaterThan(0);
    expect(toolsTwo).toBe(2 * toolsOne);

    const [seenByFirst, seenBySecond] = await Promise.all([first.scrape(), second.scrape()]);
    expect(valueOf(seenByFirst, 'loadout_catalog_tools')).toBe(toolsOne);
    expect(valueOf(seenBySecond, 'loadout_catalog_tools')).toBe(toolsTwo);
    expect(startedServers(seenByFirst)).toEqual(['alpha']);
    expect(startedServers(seenBySecond)).toEqual(['beta', 'gamma']);
  });
});
