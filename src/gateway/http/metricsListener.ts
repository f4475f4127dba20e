// `/metrics` on a listener of its own (`--metrics-host`, `--metrics-port`; loopback by default),
// never on the MCP port: the metrics are the whole fleet's (every server's tools and their use),
// not what one caller's policy shows, so no MCP credential reads them; the operator puts this port
// where only the scraper reaches. Host and Origin are still checked (DNS rebinding, web pages).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../shared/index.js';
import { createRequestGuard, isLoopbackHost } from './httpGuard.js';
import { listen, urlOf } from './listening.js';

/** The one path it answers. */
export const METRICS_PATH = '/metrics';

/** Where and what the metrics listener serves. */
export interface MetricsListenerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Writes the Prometheus text (the exporter's request handler). */
  serve: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
}

/** A listening metrics endpoint. */
export interface MetricsListener {
  /** e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Listen for scrapes of GET /metrics on `host:port`. */
export async function listenForMetrics(options: MetricsListenerOptions): Promise<MetricsListener> {
  const { createServer } = await import('node:http');
  let guard: ReturnType<typeof createRequestGuard> | undefined;
  const server = createServer((req, res) => {
    const refusal = guard ? guard(req.headers, { needsToken: false, checksHost: true }) : { status: 503, message: 'loadout is starting' };
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    const answer = (status: number, text: string): void => void res.writeHead(status, { 'Content-Type': 'text/plain' }).end(`${text}\n`);
    if (refusal) return answer(refusal.status, refusal.message);
    if (path !== METRICS_PATH) return answer(404, `Nothing at ${path}; the metrics are at ${METRICS_PATH}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, `Use GET ${METRICS_PATH}`);
    options.serve(req, res);
  });
  const port = await listen(server, options.host, options.port, '--metrics-port or --metrics-host');
  guard = createRequestGuard({ host: options.host, port });
  if (!isLoopbackHost(options.host))
    options.logger.warn(
      { mod: 'http', host: options.host },
      'metrics served beyond loopback with no token: keep this port reachable by the scraper only (no Service, a NetworkPolicy)',
    );
  let closed: Promise<void> | undefined;
  return {
    url: urlOf(options.host, port, METRICS_PATH),
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
