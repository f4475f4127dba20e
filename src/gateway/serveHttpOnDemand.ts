// `serve --http`'s entry, loading the HTTP side (the guard, access-token checks, 2025 sessions,
// the 2026-07-28 endpoints) only when it is asked for: a stdio start never parses that code.
import type { Gateway } from './createGateway.js';
import type { HttpGateway, HttpServeOptions } from './http/index.js';

/** Serve `gateway` over streamable HTTP (see http/httpServer.ts); the HTTP modules are loaded on this first call. */
export async function serveHttp(gateway: Gateway, options: HttpServeOptions): Promise<HttpGateway> {
  const http = await import('./http/index.js');
  return http.serveHttp(gateway, options);
}
