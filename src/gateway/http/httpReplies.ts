// The answers `serve --http` writes itself, before or instead of MCP's: a POST body read and
// parsed (413 and 400 answered here), a malformed request refused, a JSON-RPC error, a drain's and
// a store outage's 503.
// Knows nothing of sessions.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../shared/index.js';
import { BodyTooLargeError, discardBody, hasUnreadBody, readBody } from './httpBody.js';
import { requestProblem } from '../calls/index.js';
import { drainingAnswer } from './httpDrain.js';

/** What readJsonBody gives when it has answered the request itself. */
export const NO_BODY = Symbol('no body');

// Reads and parses a POST body, answering 413/400 itself; NO_BODY means the answer was sent.
export async function readJsonBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<unknown> {
  let text: string;
  try {
    text = await readBody(req, maxBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    sendError(res, 413, `Request body is larger than ${maxBytes} bytes (raise it with --max-body-mb)`);
    return NO_BODY;
  }
  const tooDeep = nestedDeeperThan(text);
  try {
    if (!tooDeep) return JSON.parse(text) as unknown;
  } catch {
    // Answered below.
  }
  const message = tooDeep
    ? `Parse error: the body is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`
    : 'Parse error: the body is not valid JSON';
  sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32700, message }, id: null });
  return NO_BODY;
}

/**
 * The answer to a POST body holding a malformed request (see requestShape.ts), or undefined. A
 * batch is refused whole, as the SDK would: each request in it is answered, the malformed ones
 * with what is wrong, the others with which message made the batch fail.
 */
export function refuseMalformedRequests(body: unknown): unknown {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const problems = messages.map((message) => (typeof message === 'object' && message !== null ? requestProblem(message) : undefined));
  const first = problems.findIndex((problem) => problem !== undefined);
  if (first === -1) return undefined;
  const answers = messages.flatMap((message, index) => {
    const problem = problems[index];
    if (problem) return [{ jsonrpc: '2.0', id: problem.id, error: { code: problem.code, message: problem.message } }];
    const id = (message as { id?: unknown }).id;
    const isRequest =
      typeof message === 'object' && message !== null && 'method' in message && (typeof id === 'string' || typeof id === 'number');
    return isRequest
      ? [
          {
            jsonrpc: '2.0',
            id,
            error: { code: -32600, message: `Invalid Request: not processed, because message ${first + 1} of the batch is malformed` },
          },
        ]
      : [];
  });
  return Array.isArray(body) ? answers : answers[0];
}

/** Refuse a request while draining: 503 with Retry-After. */
export function sendDraining(res: ServerResponse): void {
  const [status, headers, body] = drainingAnswer();
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, status, body);
}

/** Seconds a request refused for the store being away is told to wait (Retry-After): about a failover's length. */
export const STORE_AWAY_RETRY_AFTER_SECONDS = 2;

/**
 * Refuse a request this replica could not answer without the store (a 2025 session it does not
 * hold, say): 503 with Retry-After, so a balancer sends it on to a replica that can (one holding
 * the session) and a client tries again. Nothing was done: what needed the store failed first.
 */
export function sendStoreAway(res: ServerResponse, message: string): void {
  res.setHeader('Retry-After', String(STORE_AWAY_RETRY_AFTER_SECONDS));
  sendError(res, 503, message);
}

/** A JSON-RPC error answer (code -32000) with `status`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

// An answer sent before the request's body was read says `Connection: close`: the rest of that
// body is still on the socket, so a keep-alive client's next request there would be read as body.
// The socket is closed only once the body is drained (see httpBody.ts): closing it now would reset
// the upload, and the answer with it.
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  if (!hasUnreadBody(res.req)) {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(text);
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), Connection: 'close' }).write(text);
  void discardBody(res.req).then(() => res.end());
}
