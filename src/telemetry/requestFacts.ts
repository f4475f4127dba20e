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
const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'];
const HEADER_GETTER = {
  keys: () => TRACE_HEADERS,
  get: (header: HeaderReader, key: string) => header(key),
};
// Most requests carry no trace context: they all get this one answer.
const UNPARENTED = { parent: ROOT_CONTEXT, links: undefined };

/** One header of an HTTP request by its lower-case name, whatever object the request's headers are in. */
export type HeaderReader = (name: string) => string | undefined;

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
export function incomingContext(meta: Meta | undefined, header: HeaderReader | undefined): { parent: Context; links: Link[] | undefined } {
  const fromMeta = meta && META_GETTER.get(meta, 'traceparent') ? propagation.extract(ROOT_CONTEXT, meta, META_GETTER) : undefined;
  const fromHttp = header?.('traceparent') ? propagation.extract(ROOT_CONTEXT, header, HEADER_GETTER) : undefined;
  const httpSpan = fromHttp && trace.getSpanContext(fromHttp);
  if (fromMeta) return { parent: fromMeta, links: httpSpan ? [{ context: httpSpan }] : undefined };
  return fromHttp ? { parent: fromHttp, links: undefined } : UNPARENTED;
}
