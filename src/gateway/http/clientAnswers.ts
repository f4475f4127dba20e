// A 2025 session's answers to the requests its server sent the client mid-call (sampling,
// elicitation), with a team store. The request goes out on the call's own POST stream, on the
// replica serving the call; the client POSTs its answer separately, and a balancer may send that
// POST to another replica. This decorator, on each copy of the session, knows which requests its
// copy is waiting on: an answer to one of them is passed on; any other answer is handed to
// `elsewhere` (sharedSessions.ts puts it in the session's record, where the copy waiting on it
// takes it with `deliver`).
import {
  isJSONRPCResponse,
  type JSONRPCMessage,
  type JSONRPCResponse,
  type MessageExtraInfo,
  type RequestId,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { TransportDecorator } from '../../shared/index.js';

/** A JSON-RPC answer (result or error) to a request the server sent. */
export type ClientAnswer = JSONRPCResponse & { id: RequestId };

/** The server side of one copy of a session, seeing the answers its client sends. */
export class ClientAnswers extends TransportDecorator {
  readonly #waiting = new Set<RequestId>();
  readonly #elsewhere: (answer: ClientAnswer) => void;

  constructor(inner: Transport, elsewhere: (answer: ClientAnswer) => void) {
    super(inner);
    this.#elsewhere = elsewhere;
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('method' in message && 'id' in message) this.#waiting.add(message.id);
    return this.inner.send(message, options);
  }

  /** Pass on `answer` (as kept in the store: checked here) if this copy waits on it; false otherwise. */
  deliver(answer: unknown): boolean {
    if (!isClientAnswer(answer) || !this.#waiting.delete(answer.id)) return false;
    this.onmessage?.(answer);
    return true;
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (isClientAnswer(message) && !this.#waiting.delete(message.id)) return this.#elsewhere(message);
    this.onmessage?.(message, extra);
  }

  protected innerClosed(): void {
    this.#waiting.clear();
  }
}

function isClientAnswer(value: unknown): value is ClientAnswer {
  return isJSONRPCResponse(value) && value.id !== undefined;
}
