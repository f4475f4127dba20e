// What one MCP request or answer says, as span and metric attributes of the MCP conventions, and
// where a request's trace context comes from (the client's `_meta`, else its HTTP traceparent).
import { propagation, trace, ROOT_CONTEXT, SpanStatusCode, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { ATTR } from './names.js';

export type Meta = Record<string, unknown>;

/** A request's span, and what its duration is recorded under. */
export interface OpenRequest {
  readonly span: Span;
  readonly startedMs: number;
  readonly attributes: Attributes;
}

// Reads a `_meta` bag or HTTP headers as a propagation carrier.
const META_GETTER = {
  keys: (carrier: Meta) => Object.keys(carrier),
  get: (carrier: Meta, key: string) => (typeof carrier[key] === 'string' ? carrier[key] : undefined),
};
const HEADER_GETTER = {
  keys: (headers: Headers) => [...headers.keys()],
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
};

/** The attributes of one request (those a metric keeps, and the span's extras), and its span's name. */
export function requestFacts(method: string, params: Meta | undefined): { name: string; attributes: Attributes } {
  const attributes: Attributes = { [ATTR.methodName]: method };
  let target: unknown;
  if (method === 'tools/call') {
    target = params?.name;
    attributes[ATTR.operationName] = 'execute_tool';
    if (typeof target === 'string') attributes[ATTR.toolName] = target;
  } else if (method === 'prompts/get') {
    target = params?.name;
    if (typeof target === 'string') attributes[ATTR.promptName] = target;
  }
  return { name: typeof target === 'string' ? `${method} ${target}` : method, attributes };
}

/**
 * What an answer says of its request: error.type and the JSON-RPC code, when it failed. Never the
 * error's message: a server's message may quote the arguments it was sent.
 */
export function answerFacts(message: JSONRPCMessage): { attributes: Attributes; failure?: string } {
  if ('error' in message) {
    const code = String(message.error.code);
    return { attributes: { [ATTR.errorType]: code, [ATTR.statusCode]: code }, failure: `JSON-RPC error ${code}` };
  }
  const result = 'result' in message ? (message.result as { isError?: unknown }) : undefined;
  if (result?.isError === true) return { attributes: { [ATTR.errorType]: 'tool_error' }, failure: 'tool_error' };
  return { attributes: {} };
}

export function metaOf(params: unknown): Meta | undefined {
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  return typeof meta === 'object' && meta !== null ? (meta as Meta) : undefined;
}

/** End a request's span with what its answer said; the attributes its duration is recorded under. */
export function finish(open: OpenRequest, extra: Attributes, failure: string | undefined): Attributes {
  const { span } = open;
  span.setAttributes(extra);
  if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
  span.end();
  return { ...open.attributes, ...extra };
}

/** A SERVER span just started: its request, and the context the request is handled in. */
export interface OpenRequestStart {
  readonly open: OpenRequest;
  readonly context: Context;
}

// A metric keeps low-cardinality attributes only: no request or session id.
const NOT_ON_METRICS = new Set<string>([ATTR.requestId, ATTR.sessionId, ATTR.resourceUri]);
export function metricAttributes(attributes: Attributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([key]) => !NOT_ON_METRICS.has(key)));
}

/** The parent of a SERVER span: the client's `_meta` context, else its HTTP `traceparent`; the HTTP one is linked when both are. */
export function incomingContext(meta: Meta | undefined, headers: Headers | undefined): { parent: Context; links: Link[] } {
  const fromMeta = meta && META_GETTER.get(meta, 'traceparent') ? propagation.extract(ROOT_CONTEXT, meta, META_GETTER) : undefined;
  const fromHttp = headers?.get('traceparent') ? propagation.extract(ROOT_CONTEXT, headers, HEADER_GETTER) : undefined;
  const httpSpan = fromHttp && trace.getSpanContext(fromHttp);
  if (fromMeta) return { parent: fromMeta, links: httpSpan ? [{ context: httpSpan }] : [] };
  return { parent: fromHttp ?? ROOT_CONTEXT, links: [] };
}
