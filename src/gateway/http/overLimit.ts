// A tools/call over a rate limit, answered over HTTP as `429 Too Many Requests` with `Retry-After`
// (seconds) and the JSON-RPC error the same call gets on stdio (code -32029, its `data` saying when
// to retry). A 2025 session answers on an event stream whose 200 is sent before the call is routed,
// and the SDK's 2026-07-28 handler writes its own status, so the HTTP layer asks the call's session
// first (CallRouter.limitRefusal: counting nothing, recording the refusal); a call it lets through
// is counted where it is routed, as on stdio. A call that loses the last of a limit to another in
// that moment still gets the error, in a 200; one answered in front of the handler gets its 429 here.
import type { CallToolRequest, JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import type { ServerResponse } from 'node:http';
import { RATE_LIMITED_CODE, isRateLimitError } from '../calls/index.js';

/** The rate-limit refusal a call would get now, recorded (the session's limitRefusal). */
type LimitCheck = (params: CallToolRequest['params'], requestId: RequestId) => Error | undefined | Promise<Error | undefined>;

/**
 * Answer `body` 429 if it is one tools/call `check` refuses for a rate limit; false when it is not
 * answered. `answered` hears the answer sent (the request's telemetry: its JSON-RPC code is its error.type).
 */
export async function answeredOverLimit(
  body: unknown,
  res: ServerResponse,
  check: LimitCheck,
  answered?: (message: JSONRPCMessage) => void,
): Promise<boolean> {
  const request = body as { method?: unknown; id?: unknown; params?: { name?: unknown } } | undefined;
  if (request?.method !== 'tools/call' || typeof request.params?.name !== 'string') return false;
  const id = request.id as RequestId;
  const error = await check(request.params as CallToolRequest['params'], id);
  if (!error || !isRateLimitError(error)) return false;
  const { code, message, data } = error as Error & { code: number; data?: unknown };
  const answer = { jsonrpc: '2.0', id, error: { code, message, data } } as JSONRPCMessage;
  answered?.(answer);
  res.writeHead(429, { 'Content-Type': 'application/json', ...overLimitHeaders(answer) }).end(JSON.stringify(answer));
  return true;
}

/** The `Retry-After` header of an answer that is a rate-limit error; none for any other. */
export function overLimitHeaders(message: JSONRPCMessage): { 'Retry-After': string } | undefined {
  if (!('error' in message) || message.error.code !== RATE_LIMITED_CODE) return undefined;
  const { retryAfterSeconds } = (message.error.data ?? {}) as { retryAfterSeconds?: unknown };
  return typeof retryAfterSeconds === 'number' ? { 'Retry-After': String(retryAfterSeconds) } : undefined;
}
