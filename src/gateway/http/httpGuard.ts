// The checks every HTTP request passes before it reaches an MCP session: Host (DNS rebinding: the
// bound address, and the names a proxy in front sends, --allowed-host), Origin (foreign web pages),
// and the bearer token. Pure functions of the request headers; it knows nothing of sessions or MCP.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { LoadoutError } from '../../shared/index.js';

/** Why a request is refused: the HTTP status and a one-line reason. */
interface Refusal {
  status: 401 | 403 | 503;
  message: string;
}

/** What the guard compares requests against. */
interface GuardOptions {
  /** The host the server is bound to, as given (`127.0.0.1`, `::1`, `0.0.0.0`, a name…). */
  host: string;
  /** The port actually bound. */
  port: number;
  /** The bearer tokens accepted, if any is required (each is a principal of its own, see principalToolsets.ts). */
  tokens?: readonly string[];
  /** Extra origins allowed besides the server's own (e.g. a browser-based client). */
  allowedOrigins?: readonly string[];
  /** Host names accepted besides the bound address (a proxy's public name; `NAME:PORT` only on that port). */
  allowedHosts?: readonly string[];
}

/** What the guard checks of one request. */
interface GuardChecks {
  /** The bearer token (false where the path needs none, or the identity provider checks it). */
  needsToken: boolean;
  /** The Host header (false for /healthz: a probe names the replica by whatever address reaches it). */
  checksHost: boolean;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const WILDCARD_HOSTS = ['0.0.0.0', '::'];

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = stripBrackets(host).toLowerCase();
  return LOOPBACK_NAMES.includes(bare) || (isIP(bare) === 4 && bare.startsWith('127.'));
}

/** Refuse a non-loopback bind without a token: anyone on the network could drive the tools. */
export function assertSafeBind(host: string, token: string | undefined): void {
  if (isLoopbackHost(host) || token) return;
  throw new LoadoutError(
    'INVALID_ARGUMENT',
    `Refusing to listen on ${host} without a token: anyone who can reach it could call your tools. Pass --token (or set LOADOUT_TOKEN), or bind --host 127.0.0.1`,
  );
}

/** A request check built once per server: returns a refusal, or undefined when the request may pass. */
export function createRequestGuard(options: GuardOptions): (headers: IncomingHttpHeaders, checks: GuardChecks) => Refusal | undefined {
  const hostnames = allowedHostnames(options.host);
  const hostAllowed = hostCheck(hostnames, options.port, options.allowedHosts ?? []);
  const ownOrigins = new Set([...(hostnames ?? [stripBrackets(options.host)])].map((name) => originOf(name, options.port)));
  const extraOrigins = new Set((options.allowedOrigins ?? []).map((origin) => origin.replace(/\/+$/, '').toLowerCase()));
  const tokenDigests = (options.tokens ?? []).map(digest);

  return (headers, { needsToken, checksHost }) => {
    if (checksHost && !hostAllowed(headers.host)) {
      return { status: 403, message: `Host '${headers.host ?? ''}' is not this server's address` };
    }
    const origin = headers.origin?.toLowerCase();
    if (origin !== undefined && !ownOrigins.has(origin) && !extraOrigins.has(origin)) {
      return {
        status: 403,
        message: `Origin '${headers.origin}' is not allowed (start loadout with --allow-origin ${headers.origin} to allow it)`,
      };
    }
    if (needsToken && tokenDigests.length > 0 && !bearerMatches(headers.authorization, tokenDigests)) {
      return { status: 401, message: 'Missing or wrong bearer token (send Authorization: Bearer <token>)' };
    }
    return undefined;
  };
}

// The hostnames a Host header may name; undefined for a wildcard bind, where any name can reach
// the server and the token is what keeps strangers out.
function allowedHostnames(host: string): ReadonlySet<string> | undefined {
  const bare = stripBrackets(host).toLowerCase();
  if (WILDCARD_HOSTS.includes(bare)) return undefined;
  return new Set(isLoopbackHost(bare) ? [...LOOPBACK_NAMES, bare] : [bare]);
}

// Whether a Host header may reach the server: its own address and port (`hostnames`, undefined for
// a wildcard bind, where any name reaches it), or a name of `allowed`. On a wildcard bind with names
// allowed, any address literal still passes (a probe by pod IP): a rebinding page needs a name.
function hostCheck(
  hostnames: ReadonlySet<string> | undefined,
  port: number,
  allowed: readonly string[],
): (header: string | undefined) => boolean {
  const extra = allowed.map((entry) => hostOf(entry)).filter((entry) => entry !== undefined);
  if (!hostnames && extra.length === 0) return () => true;
  return (header) => {
    const host = hostOf(header);
    if (!host) return false;
    if (hostnames ? hostnames.has(host.name) && (host.port ?? 80) === port : isIP(host.name) !== 0 || isLoopbackHost(host.name))
      return true;
    return extra.some((entry) => entry.name === host.name && (entry.port === undefined || entry.port === host.port));
  };
}

// The lower-case name (brackets stripped) and the port, if one is written, of `host:port`.
function hostOf(text: string | undefined): { name: string; port?: number } | undefined {
  if (!text || /[/@?#\s]/.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${text}`);
  } catch {
    return undefined;
  }
  const name = stripBrackets(url.hostname).toLowerCase();
  // URL drops a port equal to the scheme's default: a written ":80" still counts as written.
  const written = /:(\d+)$/.exec(text)?.[1];
  return written === undefined || text.endsWith(']') ? { name } : { name, port: Number(written) };
}

function originOf(hostname: string, port: number): string {
  return `http://${isIP(hostname) === 6 ? `[${hostname}]` : hostname}:${port}`;
}

function bearerMatches(header: string | undefined, expected: readonly Buffer[]): boolean {
  const token = bearerToken(header);
  if (token === undefined) return false;
  const presented = digest(token);
  // Comparing fixed-length digests keeps the time independent of where the strings differ.
  return expected.some((candidate) => timingSafeEqual(presented, candidate));
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]!.trim();
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
