// What one MCP answer says of its request (whether and how it failed), and where a request's trace
// context comes from (the client's `_meta`, else its HTTP traceparent).
import { propagation, trace, ROOT_CONTEXT, type Context, type Link } from '@opentelemetry/api';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Failure, Meta } from './requestShapes.js';

// Reads a `_meta` bag or HTTP headers as a propagation carrier.
const META_GETTER = {
  keys: (carrier: Meta) => Object.keys(carrier),
  get: (carrier: Meta, key: string) => (typeof carrier[key] === 'string' ? carrier[key] : undefined),
};
const HEADER_GETTER = {
  keys: (headers: Headers) => [...headers.keys()],
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
};

const TOOL_ERROR: Failure = { errorType: 'tool_error', message: 'tool_error' };

/**
 * How an answer says its request failed (error.type and the JSON-RPC code), if it did. Never the
 * error's message: a server's message may quote the arguments it was sent.
 */
export function answerFacts(message: JSONRPCMessage): Failure | undefined {
  if ('error' in message) {
    const code = String(message.error.code);
    return { errorType: code, statusCode: code, message: `JSON-RPC error ${code}` };
  }
  const result = 'result' in message ? (message.result as { isError?: unknown } | undefined) : undefined;
  return result?.isError === true ? TOOL_ERROR : undefined;
}

export function metaOf(params: unknown): Meta | undefined {
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  return typeof meta === 'object' && meta !== null ? (meta as Meta) : undefined;
}

/** The parent of a SERVER span: the client's `_meta` context, else its HTTP `traceparent`; the HTTP one is linked when both are. */
export function incomingContext(meta: Meta | undefined, headers: Headers | undefined): { parent: Context; links: Link[] | undefined } {
  const fromMeta = meta && META_GETTER.get(meta, 'traceparent') ? propagation.extract(ROOT_CONTEXT, meta, META_GETTER) : undefined;
  const fromHttp = headers?.get('traceparent') ? propagation.extract(ROOT_CONTEXT, headers, HEADER_GETTER) : undefined;
  const httpSpan = fromHttp && trace.getSpanContext(fromHttp);
  if (fromMeta) return { parent: fromMeta, links: httpSpan ? [{ context: httpSpan }] : undefined };
  return { parent: fromHttp ?? ROOT_CONTEXT, links: undefined };
}
