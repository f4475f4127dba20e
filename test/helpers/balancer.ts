// A round-robin load balancer on loopback, as a test stands one in front of several `loadout serve
// --http` replicas: each request goes to the next upstream, its response streamed back, with no
// stickiness. Like nginx's `proxy_next_upstream error`, a request whose upstream refuses the
// connection (a killed replica) is sent on to the next one; bodies are read whole first so they can be.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the balancer routed it. */
export interface Routed {
  /** Index of the upstream that answered (or, for a request cut mid-answer, that was answering). */
  upstream: number;
  /** The Mcp-Method header (2026-07-28 requests carry it) and Mcp-Name (the tool called). */
  method: string | undefined;
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
  /** Requests sent to an upstream and not answered in full yet (a call under way there). */
  readonly inFlight: ReadonlySet<Routed>;
  close(): Promise<void>;
}

/** Start a balancer over `upstreams` (each a loadout /mcp URL) on a free loopback port. */
export async function startBalancer(upstreams: readonly string[]): Promise<Balancer> {
  let turn = 0;
  const served: Routed[] = [];
  const inFlight = new Set<Routed>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const first = turn++ % upstreams.length;
      const send = (attempt: number): void => {
        const upstream = (first + attempt) % upstreams.length;
        const target = new URL(upstreams[upstream]!);
        const routed: Routed = { upstream, method: header(req, 'mcp-method'), name: header(req, 'mcp-name') };
        inFlight.add(routed);
        // The Host header names the upstream, as a reverse proxy sets it (loadout checks Host against its own address).
        const forwarded = request(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
          (upstreamRes) => {
            served.push(routed);
            res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
            upstreamRes.pipe(res);
            upstreamRes.on('close', () => inFlight.delete(routed));
          },
        );
        forwarded.on('error', (error: NodeJS.ErrnoException) => {
          inFlight.delete(routed);
          if (error.code === 'ECONNREFUSED' && !res.headersSent && attempt + 1 < upstreams.length) send(attempt + 1);
          else res.destroy();
        });
        res.on('close', () => forwarded.destroy());
        forwarded.end(body);
      };
      send(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    served,
    get next() {
      return turn % upstreams.length;
    },
    inFlight,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
