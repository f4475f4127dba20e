// A round-robin load balancer on loopback for HTTP tests: each request goes to the next upstream
// in turn, with no stickiness, its response streamed back (SSE included). An upstream that refuses
// the connection is skipped for the next one, as a balancer's health check would, so a replica
// that is gone does not fail the client's request. Records which upstream served what.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the balancer passed it on. */
export interface ServedRequest {
  upstream: number;
  /** GET, POST or DELETE. */
  httpMethod: string;
  /** The JSON-RPC method of a POST (the first one of a batch), if any. */
  method: string | undefined;
  /** The `name` param of a tools/call. */
  tool: string | undefined;
}

/** A running balancer. */
export interface RoundRobin {
  /** Its `/mcp` URL. */
  url: string;
  served: ServedRequest[];
  /** Send the next request to upstream `index` (the turn goes on from there). */
  sendNextTo(index: number): void;
  close(): Promise<void>;
}

/** Balance over `upstreams` (their `/mcp` URLs), starting with the first. */
export async function startRoundRobin(upstreams: readonly string[]): Promise<RoundRobin> {
  let turn = 0;
  const served: ServedRequest[] = [];
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      const entry: ServedRequest = { upstream: -1, httpMethod: req.method ?? '', ...describe(body) };
      served.push(entry);
      forward(req, res, body, entry, upstreams.length);
    });
  });

  // Pass the request to the upstream whose turn it is; one that refuses it gives its turn to the next.
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, entry: ServedRequest, attemptsLeft: number): void => {
    const upstream = turn++ % upstreams.length;
    entry.upstream = upstream;
    const target = new URL(upstreams[upstream]!);
    // The Host header names the upstream, as a reverse proxy sets it (loadout checks Host against its own address).
    const forwarded = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    forwarded.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && attemptsLeft > 1 && !res.headersSent) return forward(req, res, body, entry, attemptsLeft - 1);
      res.destroy();
    });
    res.on('close', () => forwarded.destroy());
    forwarded.end(body);
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    served,
    sendNextTo(index) {
      turn = index;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function describe(body: Buffer): Pick<ServedRequest, 'method' | 'tool'> {
  if (body.length === 0) return { method: undefined, tool: undefined };
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const first = (Array.isArray(parsed) ? parsed[0] : parsed) as { method?: string; params?: { name?: string } } | undefined;
    return { method: first?.method, tool: first?.method === 'tools/call' ? first.params?.name : undefined };
  } catch {
    return { method: undefined, tool: undefined };
  }
}
