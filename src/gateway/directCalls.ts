// Client tools/call requests for forwarded tools, answered straight from the session's transport.
// The SDK Server's request path (a schema parse of every request, a handler context, response
// assembly) costs more than forwarding itself, on the path of every tool call an agent makes.
// Anything else — meta-tools, a name not routed (yet), other methods — goes on to the Server,
// which answers it as before; so does the cancellation of a request it holds. Malformed tools/call
// params are answered here, with InvalidParams saying what is wrong: the Server would drop them
// without an answer, leaving the client to time out.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type CallToolResult, type JSONRPCMessage, type JSONRPCRequest, type ProgressToken, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { Cancellation, errorMessage } from '../shared/index.js';
import type { ClientCall } from './forward.js';

/** What the session supplies: which names it forwards, and the forwarding itself. */
export interface DirectCallHandler<Target> {
  /** The forwarding target of an exposed tool name, or undefined to let the Server answer. */
  targetOf(name: string): Target | undefined;
  forward(target: Target, args: Record<string, unknown> | undefined, call: ClientCall): Promise<CallToolResult>;
  /** A failure to send an answer (the client went away), for the log. */
  onSendError(error: unknown): void;
}

/**
 * Take over `transport`'s incoming messages in front of the Server already connected to it;
 * returns the function that cancels the calls still running (when the session ends).
 */
export function answerForwardedCalls<Target>(transport: Transport, handler: DirectCallHandler<Target>): () => void {
  const running = new Map<RequestId, Cancellation>();
  const serverOnMessage = transport.onmessage;

  // True when this module answered `message` (a tools/call): forwarded, or refused as malformed.
  const tryForward = (message: JSONRPCRequest): boolean => {
    const id = message.id;
    const problem = paramsProblem(message.params);
    if (problem) {
      const error = { code: ErrorCode.InvalidParams, message: `Invalid tools/call request: ${problem}` };
      transport.send({ jsonrpc: '2.0', id, error }, { relatedRequestId: id }).catch(handler.onSendError);
      return true;
    }
    const { name, arguments: args, _meta: meta } = message.params as { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: ProgressToken } };
    const target = handler.targetOf(name);
    if (target === undefined) return false;
    const cancellation = new Cancellation();
    running.set(id, cancellation);
    // relatedRequestId puts every message of this call on the call's own response stream (HTTP).
    const send = (answer: JSONRPCMessage): Promise<void> => transport.send(answer, { relatedRequestId: id });
    const call: ClientCall = {
      requestId: id,
      cancellation,
      progressToken: meta?.progressToken,
      sendNotification: (notification) => send({ jsonrpc: '2.0', ...notification }),
    };
    handler
      .forward(target, args, call)
      .then(
        // A cancelled request gets no answer (as the SDK does), whatever the downstream said.
        (result) => (cancellation.cancelled ? undefined : send({ jsonrpc: '2.0', id, result })),
        (error: unknown) => (cancellation.cancelled ? undefined : send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: errorMessage(error) } })),
      )
      .catch(handler.onSendError)
      .finally(() => {
        if (running.get(id) === cancellation) running.delete(id);
      });
    return true;
  };

  transport.onmessage = (message, extra) => {
    if ('method' in message) {
      if ('id' in message && message.method === 'tools/call' && tryForward(message)) return;
      if (message.method === 'notifications/cancelled') {
        const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        const cancellation = requestId === undefined ? undefined : running.get(requestId);
        if (cancellation) {
          running.delete(requestId!);
          cancellation.cancel((message.params as { reason?: unknown }).reason ?? 'cancelled by the client');
          return;
        }
      }
    }
    serverOnMessage?.(message, extra);
  };

  return () => {
    for (const cancellation of running.values()) cancellation.cancel('the client session ended');
    running.clear();
  };
}

// What is wrong with tools/call params, in the words of the spec's schema; undefined if nothing.
function paramsProblem(params: unknown): string | undefined {
  if (!isPlainObject(params)) return 'params must be an object';
  if (typeof params.name !== 'string') return "params.name must be a string (the tool's name)";
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return "params.arguments must be an object (the tool's arguments by name)";
  const meta = params._meta;
  if (meta === undefined) return undefined;
  if (!isPlainObject(meta)) return 'params._meta must be an object';
  const token = meta.progressToken;
  return token === undefined || typeof token === 'string' || typeof token === 'number' ? undefined : 'params._meta.progressToken must be a string or a number';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
