// Which client session answers a sampling or elicitation request that a downstream server makes
// mid-call. JSON-RPC does not say which call such a request belongs to, so each server's calls in
// flight are tracked with their callers: when they all come from one session, that session gets
// it; when several sessions have calls in flight to the server, it is refused, never guessed.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CreateMessageRequest, ElicitRequest, ListRootsRequest } from '@modelcontextprotocol/server';

/**
 * A request a downstream server makes of its client during a call (it needs a human, a model, or,
 * from a 2026-07-28 server only, the calling client's roots).
 */
export type RelayedRequest = CreateMessageRequest | ElicitRequest | ListRootsRequest;

/**
 * The client session a forwarded request was made for: it answers the sampling and elicitation
 * requests the downstream makes while the request runs. `owner` identifies the session.
 */
export interface DownstreamCaller {
  readonly owner: object;
  relay(request: RelayedRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
  /**
   * Relay one round of a 2026-07-28 server's input requests at once, by the keys the server gave
   * them, and answer by the same keys. Without it, they are relayed one after another.
   */
  relayRound?(requests: ReadonlyMap<string, RelayedRequest>, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** The callers of the calls in flight, per server. */
export class InFlightCallers {
  readonly #byServer = new Map<string, DownstreamCaller[]>();

  /** Record a call to `server` made by `caller`; returns the function that ends the record. */
  add(server: string, caller: DownstreamCaller): () => void {
    const callers = this.#byServer.get(server) ?? [];
    callers.push(caller);
    this.#byServer.set(server, callers);
    return () => {
      const index = callers.indexOf(caller);
      if (index >= 0) callers.splice(index, 1);
      if (callers.length === 0 && this.#byServer.get(server) === callers) this.#byServer.delete(server);
    };
  }

  /** Hand `request` from `server` to the session whose call it belongs to, or refuse it. */
  relay(server: string, request: RelayedRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    const callers = this.#byServer.get(server) ?? [];
    const owners = new Set(callers.map((caller) => caller.owner));
    if (owners.size === 0) {
      return refuse(
        `loadout got ${request.method} from server '${server}' while no call to it was in flight; it only relays requests made during a call`,
      );
    }
    if (owners.size > 1) {
      return refuse(
        `loadout got ${request.method} from server '${server}' while ${owners.size} client sessions had calls in flight to it; it cannot tell which session the request is for, so it refuses rather than guess`,
      );
    }
    // The most recent call of that session: its request stream is the one most likely still open.
    return callers[callers.length - 1]!.relay(request, signal);
  }
}

function refuse(message: string): Promise<never> {
  return Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, message));
}
