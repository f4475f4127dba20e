import { afterEach, describe, expect, it } from 'vitest';
import { textOf, useGatewaySandbox, writeServersYaml, type GatewayProcess } from '../helpers/gateway.js';
import { freePort, startFixtureServer, type ListeningProcess } from '../helpers/http.js';

// Health pings are off in every test here: the call path alone must notice the restart.
const NO_PINGS = { gateway: { health_interval_seconds: 0 } };

describe('a downstream HTTP server that restarts', () => {
  const sandbox = useGatewaySandbox();
  let server: ListeningProcess | undefined;
  afterEach(async () => {
    await server?.close('SIGKILL');
    server = undefined;
  });

  const pidOf = async (gateway: GatewayProcess): Promise<string> => {
    const result = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'web.pid', arguments: {} } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return textOf(result);
  };

  for (const mode of ['http', 'sse'] as const) {
    it(`answers the next call after a ${mode === 'http' ? 'streamable HTTP' : 'SSE'} server restarts on its port, with pings off`, async () => {
      const port = await freePort();
      server = await startFixtureServer(mode, port);
      await writeServersYaml(sandbox.dirs.configDir, { web: { type: mode, url: server.url } }, NO_PINGS);
      const gateway = await sandbox.start();
      const before = await pidOf(gateway);
      await server.close('SIGKILL');
      server = await startFixtureServer(mode, port);
      const after = await pidOf(gateway);
      expect(after).toBe(String(server.pid));
      expect(after).not.toBe(before);
      // Later calls use the new session as usual.
      const echoed = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'web.echo', arguments: { text: 'again' } } });
      expect(textOf(echoed)).toBe('again');
    });
  }
});
