import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  type JSONRPCRequest,
} from '@modelcontextprotocol/server';

// What is wrong with a client's JSON-RPC request, in words that name the field. The SDK drops a
// request it cannot parse without a word, and the client then waits for its timeout; every
// request with an id must get an answer instead: -32600 Invalid Request or -32602 Invalid params.
// Checks only what the SDK's own request schema checks (cheap: no zod on every message).

/** A JSON-RPC error to answer a malformed request with. */
export interface RequestProblem {
  /** The request's id, or null when the id itself is unusable. */
  id: string | number | null;
  code: ProtocolErrorCode.InvalidRequest | ProtocolErrorCode.InvalidParams;
  message: string;
}

const REQUEST_FIELDS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/**
 * The problem of `message` if it is a request (it has an id, and no result or error) that the SDK
 * would drop; undefined for a well-formed request, a notification or a response (those get no answer).
 */
export function requestProblem(message: object): RequestProblem | undefined {
  const fields = message as Record<string, unknown>;
  if (!('id' in fields) || 'result' in fields || 'error' in fields) return undefined;
  const { id, method, params } = fields;
  const usableId = typeof id === 'string' || Number.isInteger(id) ? (id as string | number) : null;
  const invalid = (text: string): RequestProblem => ({
    id: usableId,
    code: ProtocolErrorCode.InvalidRequest,
    message: `Invalid Request: ${text}`,
  });
  if (usableId === null) return invalid('id must be a string or an integer');
  if (fields.jsonrpc !== '2.0') return invalid('jsonrpc must be "2.0"');
  if (typeof method !== 'string') return invalid('method must be a string');
  for (const field in fields) {
    if (!REQUEST_FIELDS.has(field)) return invalid(`unknown field '${field}' (a request has jsonrpc, id, method and params)`);
  }
  const problem = paramsProblem(method, params);
  return problem === undefined
    ? undefined
    : { id: usableId, code: ProtocolErrorCode.InvalidParams, message: `Invalid ${method} request: ${problem}` };
}

// What is wrong with a request's params; tools/call's own fields are checked too, as the SDK Server would.
function paramsProblem(method: string, params: unknown): string | undefined {
  if (params === undefined) return method === 'tools/call' ? "params must be an object with the tool's name" : undefined;
  if (!isPlainObject(params)) return 'params must be an object';
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) return 'params._meta must be an object';
    const token = meta.progressToken;
    if (token !== undefined && typeof token !== 'string' && !Number.isInteger(token))
      return 'params._meta.progressToken must be a string or a number (an integer)';
    const task = meta[RELATED_TASK];
    if (task !== undefined && !(isPlainObject(task) && typeof task.taskId === 'string'))
      return `params._meta["${RELATED_TASK}"] must be an object with a string taskId`;
  }
  if (method !== 'tools/call') return undefined;
  if (typeof params.name !== 'string') return "params.name must be a string (the tool's name)";
  if (params.arguments !== undefined && !isPlainObject(params.arguments))
    return "params.arguments must be an object (the tool's arguments by name)";
  return undefined;
}

/** Whether `value` is a JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether `request` is a plain 2026-07-28 call loadout may answer in front of the SDK's entry: it
 * is well formed, carries the envelope of revision `version` whole, and asks for no progress, log
 * messages, task or retry round (those need the SDK's request context).
 */
export function isPlainModernCall(request: JSONRPCRequest, version: string | undefined): boolean {
  if (request.method !== 'tools/call' || requestProblem(request)) return false;
  // requestProblem has checked that params and its _meta, if any, are objects.
  const params = request.params!;
  const meta = params._meta;
  return (
    meta !== undefined &&
    version !== undefined &&
    meta[PROTOCOL_VERSION_META_KEY] === version &&
    isPlainObject(meta[CLIENT_INFO_META_KEY]) &&
    isPlainObject(meta[CLIENT_CAPABILITIES_META_KEY]) &&
    meta.progressToken === undefined &&
    meta[LOG_LEVEL_META_KEY] === undefined &&
    params.task === undefined &&
    params.requestState === undefined &&
    params.inputResponses === undefined
  );
}
