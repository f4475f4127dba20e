// Binding an HTTP server to its address: the one error line a bind failure is, and the URL a
// person or a client is shown for it. Shared by the MCP listener and the metrics listener.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoadoutError, errorMessage } from '../../shared/index.js';

/** Listen on `host:port` (0: a free port); resolves to the port bound. `flags` name the options that chose them. */
export function listen(server: Server, host: string, port: number, flags = '--port or --host'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new LoadoutError('INVALID_ARGUMENT', `Cannot listen on ${host}:${port} (${errorMessage(error)}); choose another ${flags}`, {
          cause: error,
        }),
      ),
    );
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** `http://host:port/path`, an IPv6 host in brackets. */
export function urlOf(host: string, port: number, path: string): string {
  const hostInUrl = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${hostInUrl}:${port}${path}`;
}
