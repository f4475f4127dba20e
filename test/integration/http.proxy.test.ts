// `serve --http` behind a reverse proxy that sends its public name as Host (nginx's `proxy_set_header
// Host $host`): a loopback replica answers that name only with --allowed-host (or
// gateway.allowed_hosts), still refuses other names, and answers /healthz whatever Host a probe sends.
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { fixture, nodeServer, writeServersYaml } from '../helpers/gateway.js';
import { startBalancer, type Balancer } from '../helpers/balancer.js';
import { connectHttp, listedToolNames, connectModernClient, useHttpHarness } from '../helpers/http.js';

const PUBLIC_NAME = 'mcp.example.com';

// The status of GET `path` sent to `url`'s address with `host` as its Host header.
function statusWithHost(url: string, path: string, host: string): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ host: target.hostname, port: target.port, path, method: 'GET', headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    sent.on('error', reject);
    sent.end();
  });
}

describe('loadout serve --http behind a proxy', () => {
  const harness = useHttpHarness();
  let balancer: Balancer | undefined;
  afterEach(async () => {
    await balancer?.close();
    balancer = undefined;
  });

  it("refuses a proxy's public Host on a loopback bind, and answers it with --allowed-host in both eras", async () => {
    await writeServersYaml(harness().dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const refusing = await harness().start();
    balancer = await startBalancer([refusing.url], { host: PUBLIC_NAME });
    const response = await fetch(balancer.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(403);
    await balancer.close();
    await refusing.close();

    const gateway = await harness().start(['--allowed-host', PUBLIC_NAME, '--equip', 'all']);
    balancer = await startBalancer([gateway.url], { host: PUBLIC_NAME });
    const old = await connectHttp(balancer.url);
    expect((await old.client.listTools()).tools.map((tool) => tool.name)).toContain('echo_echo');
    await old.close();
    const modern = await connectModernClient(balancer.url);
    expect(await listedToolNames(modern)).toContain('echo_echo');
    await modern.close();
    // Other names are still refused, on the proxy's port or its own.
    const port = new URL(gateway.url).port;
    expect(await statusWithHost(gateway.url, '/mcp', 'rebound.example')).toBe(403);
    expect(await statusWithHost(gateway.url, '/mcp', `rebound.example:${port}`)).toBe(403);
  });

  it('takes allowed hosts from gateway.allowed_hosts, and answers /healthz whatever Host a probe sends', async () => {
    await writeServersYaml(harness().dirs.configDir, {}, { gateway: { allowed_hosts: [`${PUBLIC_NAME}:8443`] } });
    const gateway = await harness().start();
    expect(await statusWithHost(gateway.url, '/mcp', `${PUBLIC_NAME}:8443`)).not.toBe(403);
    expect(await statusWithHost(gateway.url, '/mcp', PUBLIC_NAME)).toBe(403);
    for (const host of ['10.0.0.7:7077', '127.0.0.1', 'rebound.example'])
      expect(await statusWithHost(gateway.url, '/healthz', host)).toBe(200);
  });
});
