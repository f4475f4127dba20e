// What a start parses: a stdio `serve` (what every agent session starts) loads neither the HTTP
// What a start parses: a stdio `serve` (what every agent session starts) loads neither the HTTP
// side (the guard, access-token checks, 2025 sessions) nor the Postgres client, nor run-code's
// runner and QuickJS until a script runs; `serve --http` loads the HTTP side; with telemetry off
// and no `--store`, neither loads any OpenTelemetry, Postgres or jose code; `loadout search` loads
// its own command's code and no other command's.
// Read from the modules the process resolved, and the bundle chunks among them with their source maps.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fixture, nodeServer, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { startHttpGateway } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';

// The sources (as the chunks' source maps name them) of every bundle file the logged process loaded.
async function sourcesLoaded(log: string): Promise<string[]> {
  const urls = (await readFile(log, 'utf8')).split('\n').filter((url) => /\/dist\/bundle\/[^/]+\.js$/.test(url));
  const maps = await Promise.all(
    urls.map(async (url) => JSON.parse(await readFile(`${fileURLToPath(url)}.map`, 'utf8')) as { sources: string[] }),
  );
  return maps.flatMap((map) => map.sources);
}

// Everything the logged process ran: the modules it resolved outside the bundle (OpenTelemetry is
// left external), and the sources bundled into the chunks it loaded (postgres.js and jose are not).
async function codeLoaded(log: string): Promise<string[]> {
  const resolved = (await readFile(log, 'utf8')).split('\n').filter((url) => url && !/\/dist\/bundle\//.test(url));
  return [...resolved, ...(await sourcesLoaded(log))];
}

const HTTP_SIDE = /src\/gateway\/http\/httpServer\.ts$/;
const POSTGRES_CLIENT = /node_modules\/postgres\//;
// What a gateway with telemetry off and no --store never runs: the OpenTelemetry API and SDK, the
// Postgres backend and its client, and jose (access tokens are checked only with `auth:`).
const NOT_PLAIN_GATEWAY = [
  /node_modules\/@opentelemetry\//,
  /src\/telemetry\/otel\.ts$/,
  POSTGRES_CLIENT,
  /src\/store\/postgresStore\.ts$/,
  /node_modules\/jose\//,
];
const plainGatewayBreaches = async (log: string): Promise<string[]> =>
  (await codeLoaded(log)).filter((code) => NOT_PLAIN_GATEWAY.some((pattern) => pattern.test(code)));
const CODE_MODE = /src\/gateway\/codeMode\//;
// What `search` never runs: the gateway and MCP serving, other commands (client setup, doctor,
// optimization reports), the Postgres client.
const NOT_SEARCH = [
  /src\/gateway\//,
  /src\/cli\/commands\/(?!search\.ts)/,
  /src\/cli\/(clients|doctorChecks|optimizeOutput)/,
  POSTGRES_CLIENT,
];

// NODE_OPTIONS and the module log path for a process whose modules are logged under `name`.
function logged(root: string, name: string): { log: string; env: Record<string, string> } {
  const log = path.join(root, `modules-${name}.log`);
  return { log, env: { NODE_OPTIONS: `--import=${fixture('moduleLog')}`, LOADOUT_TEST_MODULE_LOG: log } };
}

describe('modules a start loads', () => {
  const sandbox = useGatewaySandbox();

  it("a stdio serve loads neither the HTTP gateway, the Postgres client nor run-code's interpreter; serve --http loads the HTTP gateway; neither loads OpenTelemetry, Postgres or jose code", async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });

    const stdio = logged(sandbox.dirs.root, 'stdio');
    const gateway = await sandbox.start({ env: stdio.env, args: ['--equip', 'all'] });
    expect((await gateway.client.listTools()).tools.length).toBeGreaterThan(1);
    await gateway.close();
    const stdioSources = await sourcesLoaded(stdio.log);
    expect(
      stdioSources.some((source) => source.endsWith('src/gateway/createGateway.ts')),
      'the log sees the gateway',
    ).toBe(true);
    expect(stdioSources.filter((source) => HTTP_SIDE.test(source) || POSTGRES_CLIENT.test(source) || CODE_MODE.test(source))).toEqual([]);
    expect((await readFile(stdio.log, 'utf8')).split('\n').filter((url) => url.includes('quickjs'))).toEqual([]);
    expect(await plainGatewayBreaches(stdio.log)).toEqual([]);

    const http = logged(sandbox.dirs.root, 'http');
    const served = await startHttpGateway(sandbox.dirs, [], http.env);
    await served.close();
    expect((await sourcesLoaded(http.log)).filter((source) => HTTP_SIDE.test(source))).toHaveLength(1);
    expect(await plainGatewayBreaches(http.log)).toEqual([]);
  });

  it('loadout search loads the search command and none of the gateway, the other commands or the Postgres client', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    expect((await runCli(sandbox.dirs, ['refresh'])).code).toBe(0);
    const search = logged(sandbox.dirs.root, 'search');
    const run = await runCli(sandbox.dirs, ['search', 'echo', 'a', 'message'], { env: search.env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('echo.');
    const sources = await sourcesLoaded(search.log);
    expect(
      sources.some((source) => source.endsWith('src/cli/commands/search.ts')),
      'the log sees the search command',
    ).toBe(true);
    expect(sources.filter((source) => NOT_SEARCH.some((pattern) => pattern.test(source)))).toEqual([]);
  });
});
