// Test helpers for HTTP: a real `loadout serve --http` child on a random loopback port, SDK
// clients connected to it over streamable HTTP, and HTTP fixture servers (ours and
// server-everything) started on random ports and killed with SIGKILL at the end.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { usePerTest } from './perTest.js';
import { CLI, THIRD_PARTY, fixture, makeTempDirs, trackListChanged, waitForExit, type TempDirs } from './gateway.js';

/** The headers of a raw POST to /mcp. */
export const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/** A raw 2025-era initialize (id 1), as a client opening a session sends it. */
export const RAW_INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A spawned process that announced its URL. */
export interface ListeningProcess {
  url: string;
  pid: number;
  /** Output so far (stdout + stderr). */
  output(): string;
  /** Settles with the exit code when the process has exited (null: ended by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM (or SIGKILL) and wait for the exit. */
  close(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawn `command` and resolve once its output matches `pattern` (group 1 = the URL). */
export function spawnListening(
  command: string,
  args: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
): Promise<ListeningProcess> {
  const child: ChildProcess = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = pattern.exec(output);
      if (!match) return;
      resolve({
        url: match[1]!,
        pid: child.pid!,
        output: () => output,
        exited,
        async close(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await waitForExit(child.pid!);
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code} before listening:\n${output}`)));
  });
}

/** Start `loadout serve --http --port 0` with the given dirs and extra arguments (`nodeArgs` go to node itself). */
export function startHttpGateway(
  dirs: Pick<TempDirs, 'configDir' | 'dataDir'>,
  args: string[] = [],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<ListeningProcess> {
  return spawnListening(
    process.execPath,
    [
      ...nodeArgs,
      CLI,
      'serve',
      '--http',
      '--port',
      '0',
      '--config',
      dirs.configDir,
      '--data',
      dirs.dataDir,
      '--log-level',
      'info',
      ...args,
    ],
    /serving MCP at (\S+)/,
    env,
  );
}

/** Start the interactive fixture in `http` or `sse` mode (on `port`, to start it again where it was). */
export function startFixtureServer(mode: 'http' | 'sse', port?: number): Promise<ListeningProcess> {
  return spawnListening(
    process.execPath,
    [fixture('interactive'), mode],
    /LISTENING (\S+)/,
    port === undefined ? {} : { FIXTURE_PORT: String(port) },
  );
}

/** Start server-everything in streamable HTTP mode on a free port (stop it with close('SIGKILL')). */
export async function startEverythingHttp(): Promise<ListeningProcess> {
  const port = await freePort();
  const started = await spawnListening(process.execPath, [THIRD_PARTY.everything, 'streamableHttp'], /listening on port (\d+)/, {
    PORT: String(port),
  });
  return { ...started, url: `http://127.0.0.1:${port}/mcp` };
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** An SDK client connected over streamable HTTP. */
export interface HttpClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  listChangedCount(): number;
  waitForListChanged(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Connect an SDK client to `url` (with a bearer token if given). */
export async function connectHttp(
  url: string,
  options: { token?: string; capabilities?: ClientCapabilities; name?: string } = {},
): Promise<HttpClient> {
  const headers: Record<string, string> = options.token ? { Authorization: `Bearer ${options.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: options.name ?? 'loadout-http-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  const listChanged = trackListChanged(client, true);
  await client.connect(transport);
  return {
    client,
    transport,
    listChangedCount: () => listChanged.count(),
    waitForListChanged: (count, timeoutMs) => listChanged.waitFor(count, timeoutMs),
    async close() {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** One test's temp dirs, `loadout serve --http` and clients, torn down together. */
export interface HttpHarness {
  readonly dirs: TempDirs;
  /** The running gateway (after start()). */
  readonly gateway: ListeningProcess;
  start(args?: string[], env?: Record<string, string>): Promise<ListeningProcess>;
  connect(options?: Parameters<typeof connectHttp>[1]): Promise<HttpClient>;
  /** Close the clients, stop the gateway, delete the dirs. */
  teardown(): Promise<void>;
}

/** A fresh harness with its own temp dirs. */
export async function httpHarness(): Promise<HttpHarness> {
  const dirs = await makeTempDirs();
  const clients: HttpClient[] = [];
  let gateway: ListeningProcess | undefined;
  return {
    dirs,
    get gateway() {
      if (!gateway) throw new Error('start() the gateway first');
      return gateway;
    },
    async start(args = [], env = {}) {
      gateway = await startHttpGateway(dirs, args, env);
      return gateway;
    },
    async connect(options = {}) {
      if (!gateway) throw new Error('start() the gateway first');
      const client = await connectHttp(gateway.url, options);
      clients.push(client);
      return client;
    },
    async teardown() {
      await Promise.allSettled(clients.splice(0).map((client) => client.close()));
      await gateway?.close();
      await dirs.cleanup();
    },
  };
}

/** A fresh harness for each test, torn down after it (usePerTest); call the returned function inside a test. */
export function useHttpHarness(): () => HttpHarness {
  return usePerTest(async () => {
    const harness = await httpHarness();
    return Object.assign(harness, { close: () => harness.teardown() });
  });
}

/**
 * A client that negotiates the era (it ends up modern against loadout) through `url`, with `token`
 * as its bearer token if given, declaring `capabilities`.
 */
export async function connectModernClient(url: string, token?: string, capabilities: ClientCapabilities = {}): Promise<Client> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const client = new Client({ name: 'modern-test', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The tool names `client` lists now (its cache bypassed). */
export async function listedToolNames(client: Client): Promise<string[]> {
  return (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((tool) => tool.name);
}

/** POST a 2026-07-28 `server/discover` to `url` with no session, as a modern client's first request is (`headers`: e.g. its Authorization). */
export function postModernDiscover(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    }),
  });
}
