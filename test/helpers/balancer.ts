// A round-robin load balancer on loopback, as a test stands one in front of several `loadout serve
// --http` replicas: each request goes to the next upstream, its response streamed back (SSE
// included), with no stickiness. Like nginx's `proxy_next_upstream error`, a request whose upstream
// refuses the connection (a replica that is gone) is sent on to the next one (bodies are read whole
// first so they can be), and one that fails before its answer began is answered 502. It records which upstream served what, and a test may steer the next turn.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the balancer routed it (recorded when it is sent, so a call under way is there). */
export interface Routed {
  /** Index of the upstream it went to (the last one tried). */
  upstream: number;
  /** GET, POST or DELETE. */
  httpMethod: string;
  /** The JSON-RPC method: the Mcp-Method header (2026-07-28 requests carry it), else the body's (the first of a batch). */
  method: string | undefined;
  /** The tool a tools/call names: the Mcp-Name header, else the body's `params.name`. */
  name: string | undefined;
}

/** A running balancer. */
export interface Balancer {
  /** Its /mcp URL. */
  url: string;
  /** Every request routed so far, in order. */
  served: Routed[];
  /** The upstream the next request will go to first. */
  readonly next: number;
  /** Send the next request to upstream `index` first (the turn goes on from there). */
  sendNextTo(index: number): void;
  /** Requests sent to an upstream and not answered in full yet (a call under way there). */
  readonly inFlight: ReadonlySet<Routed>;
  close(): Promise<void>;
}

/** Options of startBalancer. */
export interface BalancerOptions {
  /** The Host header sent upstream, as nginx's `proxy_set_header Host $host` sends its public name; default: the upstream's own. */
  host?: string;
}

/** Start a balancer over `upstreams` (each a loadout /mcp URL) on a free loopback port. */
export async function startBalancer(upstreams: readonly string[], options: BalancerOptions = {}): Promise<Balancer> {
  let turn = 0;
  const served: Routed[] = [];
  const inFlight = new Set<Routed>();

  // Pass the request to the upstream whose turn it is; one that refuses it gives its turn to the next.
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, routed: Routed, attemptsLeft: number): void => {
    routed.upstream = turn++ % upstreams.length;
    const target = new URL(upstreams[routed.upstream]!);
    inFlight.add(routed);
    // The Host header names the upstream, as a reverse proxy sets it (loadout checks Host against its own address).
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: options.host ?? target.host },
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
        upstreamRes.on('close', () => inFlight.delete(routed));
      },
    );
    forwarded.on('error', (error: NodeJS.ErrnoException) => {
      inFlight.delete(routed);
      if (res.headersSent) res.destroy();
      else if (error.code === 'ECONNREFUSED' && attemptsLeft > 1) forward(req, res, body, routed, attemptsLeft - 1);
      // As nginx answers an upstream that failed before its answer began.
      else res.writeHead(502).end();
    });
    res.on('close', () => forwarded.destroy());
    forwarded.end(body);
  };

  const server: Server = createServer((req, res) => {
    void readAll(req).then((body) => {
      const routed: Routed = { upstream: -1, httpMethod: req.method ?? '', ...described(req, body) };
      served.push(routed);
      forward(req, res, body, routed, upstreams.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    served,
    get next() {
      return turn % upstreams.length;
    },
    sendNextTo(index) {
      turn = index;
    },
    inFlight,
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

function described(req: IncomingMessage, body: Buffer): Pick<Routed, 'method' | 'name'> {
  const fromBody = bodyMethod(body);
  return { method: header(req, 'mcp-method') ?? fromBody.method, name: header(req, 'mcp-name') ?? fromBody.name };
}

function bodyMethod(body: Buffer): Pick<Routed, 'method' | 'name'> {
  if (body.length === 0) return { method: undefined, name: undefined };
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const first = (Array.isArray(parsed) ? parsed[0] : parsed) as { method?: string; params?: { name?: string } } | undefined;
    return { method: first?.method, name: first?.method === 'tools/call' ? first.params?.name : undefined };
  } catch {
    return { method: undefined, name: undefined };
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
