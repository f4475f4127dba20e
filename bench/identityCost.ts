// Rows 1j/1k: what knowing the caller costs a forwarded call over HTTP (2026-07-28 requests, each
// checked on its own). Three `loadout serve --http` processes call the same echo tool in
// alternating batches: one open, one checking a JWT access token on every request (signature
// against an issuer's JWKS served here on loopback, iss, exp, audience, scope), and one checking
// the token and filtering by a policy. The CPU each spends per call is read from /proc.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { ECHO_FIXTURE, createSetup, type BenchSetup } from './catalogFixture.js';
import { spawnHttpLoadout, type HttpMcpProcess } from './httpProcess.js';
import { cpuTimeMs } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { ratio } from './stats.js';

type Setting = 'open' | 'token' | 'policy';

// An issuer that publishes its metadata and keys, and the key to sign tokens with.
async function startIssuer(): Promise<{ issuer: string; sign: (audience: string) => Promise<string>; close: () => Promise<void> }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' }] });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on('request', (req, res) => {
    const body = req.url === '/jwks' ? jwks : JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  return {
    issuer,
    sign: (audience) =>
      new SignJWT({ scope: 'mcp:tools', groups: ['engineering'] })
        .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
        .setIssuer(issuer)
        .setSubject('bench-user')
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(privateKey),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Rows 1j and 1k. */
export async function benchIdentityCost(context: BenchContext): Promise<BenchRow[]> {
  const idp = await startIssuer();
  const setups: BenchSetup[] = [];
  const processes: Partial<Record<Setting, HttpMcpProcess>> = {};
  const clients: Partial<Record<Setting, Client>> = {};
  try {
    for (const setting of ['open', 'token', 'policy'] as const) {
      const setup = await createSetup({ servers: 0, toolsPerServer: 0, echoTools: context.echoTools, toolsets: { echo: ['echo.echo'] } });
      setups.push(setup);
      const auth = setting === 'open' ? {} : { auth: { issuer: idp.issuer, scopes: ['mcp:tools'] } };
      const policy = setting === 'policy' ? { policy: { rules: [{ groups: ['engineering'], servers: ['echo'] }] } } : {};
      await writeFile(
        setup.paths.serversFile,
        stringify({ servers: { echo: { command: process.execPath, args: [ECHO_FIXTURE] } }, ...auth, ...policy }),
      );
      const http = await spawnHttpLoadout(setup.args, ['--equip', 'echo'], 0);
      processes[setting] = http;
      const headers: Record<string, string> = setting === 'open' ? {} : { Authorization: `Bearer ${await idp.sign(http.url)}` };
      const client = new Client(
        { name: `loadout-bench-${setting}`, version: '1.0.0' },
        { capabilities: {}, versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } }));
      clients[setting] = client;
    }
    const tool = (await clients.open!.listTools()).tools.find((listed) => listed.name.endsWith('echo'))?.name;
    if (!tool) throw new Error('loadout did not expose the echo tool');
    const call = (client: Client) => client.callTool({ name: tool, arguments: { text: 'ping' } });
    const { warmupCalls, sequentialCalls, batch } = context.scale;
    const settings = ['open', 'token', 'policy'] as const;
    for (const setting of settings) for (let done = 0; done < warmupCalls; done++) await call(clients[setting]!);
    const cpuMs: Record<Setting, number> = { open: 0, token: 0, policy: 0 };
    for (let done = 0; done < sequentialCalls; done += batch) {
      for (const setting of settings) {
        const before = await cpuTimeMs(processes[setting]!.pid);
        for (let n = 0; n < batch; n++) await call(clients[setting]!);
        cpuMs[setting] += (await cpuTimeMs(processes[setting]!.pid)) - before;
      }
    }
    const calls = Math.ceil(sequentialCalls / batch) * batch;
    const [open, token, policy] = settings.map((setting) => cpuMs[setting] / calls) as [number, number, number];
    const micros = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
    return [
      {
        id: '1j',
        figure: `CPU per forwarded call with a JWT access token checked (HTTP 2026-07-28, n=${calls})`,
        loadout: micros(token),
        limit: `no token ${micros(open)}`,
        ratio: ratio(token, open),
        target: '— (ratio to the open gateway)',
        values: { tokenCpuMsPerCall: token, openCpuMsPerCall: open },
      },
      {
        id: '1k',
        figure: `CPU per forwarded call with a token checked and a policy filter (HTTP 2026-07-28, n=${calls})`,
        loadout: micros(policy),
        limit: `token only ${micros(token)}`,
        ratio: ratio(policy, token),
        target: '— (ratio to the token only)',
        values: { policyCpuMsPerCall: policy, tokenCpuMsPerCall: token },
      },
    ];
  } finally {
    await Promise.allSettled(Object.values(clients).map((client) => client.close()));
    await Promise.allSettled(Object.values(processes).map((http) => http.close()));
    await Promise.allSettled(setups.map((setup) => setup.cleanup()));
    await idp.close();
  }
}
