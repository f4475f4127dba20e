// A round-robin load balancer on loopback, as a test stands one in front of several `loadout serve
// --http` replicas: each request goes to the next upstream, its response streamed back (SSE
// included), with no stickiness. Like nginx's `proxy_next_upstream error`, a request whose upstream
// refuses the connection (a replica that is gone) is sent on to the next one (bodies are read whole
// first so they can be), and one that fails before its answer began is answered 502. With
// `nextOnUnavailable` (nginx's `proxy_next_upstream http_503 non_idempotent`, or a client that
// honours Retry-After), a 503 with Retry-After (a replica draining, or unable to answer while its
// store is away: never run) is sent on to the next upstream too, and that upstream left out for
// Retry-After seconds or until replaced; so is a request whose kept-alive connection was reset
// before its answer began, and an idempotent one (a GET stream, a DELETE) whose connection failed
// before its answer began, as nginx sends on every request but POST by default.
// It records which upstream served what, and a test may steer the next turn.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// The methods nginx's proxy_next_upstream never sends on unless told `non_idempotent`.
const NON_IDEMPOTENT = new Set(['POST', 'PATCH', 'LOCK']);

/** One request as the balancer routed it (recorded when it is sent, so a call under way is there). */
export interface Routed {
  /** Index of the upstream it went to (the last one tried). */
  upstream: number;
  /** That upstream's URL when it went there (a replaced upstream's is another). */
  target: string;
  /** GET, POST or DELETE. */
  httpMethod: string;
  /** The JSON-RPC method: the Mcp-Method header (2026-07-28 requests carry it), else the body's (the first of a batch). */
  method: string | undefined;
  /** The tool a tools/call names: the Mcp-Name header, else the body's `params.name`. */
  name: string | undefined;
  /** The body's `params` (the first message's of a batch). */
  params: unknown;
  /** The HTTP status the client was answered with, once the answer began. */
  status?: number;
  /** The connection error that ended it (`ECONNRESET`, …): answered 502, or cut off mid-answer. */
  failure?: string;
  /** Date.now() when the answer ended (a stream: when it closed). */
  answeredAt?: number;
  /** Each upstream it was sent on from, in order, and why: a 503 with Retry-After, a refused connection, a kept-alive one reset. */
  retriedFrom: Array<{ upstream: number; target: string; why: RetryReason }>;
}

/** Why a request was sent on to the next upstream. */
export type RetryReason = '503' | 'refused' | 'reset';

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
  /** Send upstream `index`'s requests to `url` from now on (a replica restarted on another port), and stop leaving it out. */
  replace(index: number, url: string): void;
  close(): Promise<void>;
}

/** Options of startBalancer. */
export interface BalancerOptions {
  /** The Host header sent upstream, as nginx's `proxy_set_header Host $host` sends its public name; default: the upstream's own. */
  host?: string;
  /**
   * Send a request answered 503 with Retry-After on to the next upstream, and leave that upstream
   * out for Retry-After seconds (or until `replace`d); one whose connection is refused, or whose
   * kept-alive connection was reset before any answer began, is sent on and left out too. When every
   * upstream is out they are tried all the same. Default false: a 503 or a reset is passed back.
   */
  nextOnUnavailable?: boolean;
}

/** Start a balancer over `upstreams` (each a loadout /mcp URL) on a free loopback port. */
export async function startBalancer(upstreams: readonly string[], options: BalancerOptions = {}): Promise<Balancer> {
  let turn = 0;
  const targets = [...upstreams];
  const served: Routed[] = [];
  const inFlight = new Set<Routed>();
  // Date.now() until which each upstream is left out (0: in).
  const outUntil = targets.map(() => 0);

  // The next upstream in turn not yet tried for this request, preferring one not left out.
  const pick = (tried: ReadonlySet<number>): number => {
    const untried = [...targets.keys()].map((offset) => (turn + offset) % targets.length).filter((index) => !tried.has(index));
    const chosen = untried.find((index) => outUntil[index]! <= Date.now()) ?? untried[0]!;
    turn = chosen + 1;
    return chosen;
  };
  const leaveOut = (index: number, seconds: number): void => {
    if (options.nextOnUnavailable) outUntil[index] = Date.now() + seconds * 1000;
  };

  // Pass the request to the upstream whose turn it is; one that refuses it gives its turn to the next.
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, routed: Routed, tried: Set<number>): void => {
    routed.upstream = pick(tried);
    tried.add(routed.upstream);
    routed.target = targets[routed.upstream]!;
    const target = new URL(routed.target);
    inFlight.add(routed);
    const tryNext = (why: RetryReason): void => {
      routed.retriedFrom.push({ upstream: routed.upstream, target: routed.target, why });
      forward(req, res, body, routed, tried);
    };
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
        const retryAfter = Number(upstreamRes.headers['retry-after']);
        if (options.nextOnUnavailable && upstreamRes.statusCode === 503 && retryAfter > 0 && tried.size < targets.length) {
          // Refused before it ran (draining, or the store away there): safe to send again elsewhere.
          leaveOut(routed.upstream, retryAfter);
          upstreamRes.resume();
          upstreamRes.once('end', () => {
            inFlight.delete(routed);
            tryNext('503');
          });
          return;
        }
        routed.status = upstreamRes.statusCode ?? 502;
        res.writeHead(routed.status, upstreamRes.headers);
        upstreamRes.pipe(res);
        upstreamRes.on('close', () => {
          routed.answeredAt = Date.now();
          inFlight.delete(routed);
        });
      },
    );
    forwarded.on('error', (error: NodeJS.ErrnoException) => {
      inFlight.delete(routed);
      routed.failure = `${error.code ?? error.message}${forwarded.reusedSocket ? ' (on a kept-alive connection)' : ''}`;
      if (res.headersSent) res.destroy();
      else if (error.code === 'ECONNREFUSED' && tried.size < targets.length) {
        leaveOut(routed.upstream, 1);
        tryNext('refused');
      } else if (
        options.nextOnUnavailable &&
        ((forwarded.reusedSocket && error.code === 'ECONNRESET') || !NON_IDEMPOTENT.has(req.method ?? 'POST')) &&
        tried.size < targets.length
      ) {
        // The keep-alive race: the upstream closed a kept-alive connection (its process exiting) as
        // the request went out on it, and no answer began. Node's own advice is to send it again;
        // a request that changes nothing when repeated (a GET stream) may go again whatever failed.
        leaveOut(routed.upstream, 1);
        tryNext('reset');
      } else {
        // As nginx answers an upstream that failed before its answer began.
        routed.status = 502;
        routed.answeredAt = Date.now();
        res.writeHead(502).end();
      }
    });
    res.on('close', () => forwarded.destroy());
    forwarded.end(body);
  };

  const server: Server = createServer((req, res) => {
    void readAll(req).then((body) => {
      const routed: Routed = { upstream: -1, target: '', httpMethod: req.method ?? '', retriedFrom: [], ...described(req, body) };
      served.push(routed);
      forward(req, res, body, routed, new Set());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    served,
    get next() {
      return turn % targets.length;
    },
    sendNextTo(index) {
      turn = index;
    },
    inFlight,
    replace(index, url) {
      targets[index] = url;
      outUntil[index] = 0;
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

function described(req: IncomingMessage, body: Buffer): Pick<Routed, 'method' | 'name' | 'params'> {
  const fromBody = bodyMethod(body);
  return { ...fromBody, method: header(req, 'mcp-method') ?? fromBody.method, name: header(req, 'mcp-name') ?? fromBody.name };
}

function bodyMethod(body: Buffer): Pick<Routed, 'method' | 'name' | 'params'> {
  const none = { method: undefined, name: undefined, params: undefined };
  if (body.length === 0) return none;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const first = (Array.isArray(parsed) ? parsed[0] : parsed) as { method?: string; params?: { name?: string } } | undefined;
    return { method: first?.method, name: first?.method === 'tools/call' ? first.params?.name : undefined, params: first?.params };
  } catch {
    return none;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
