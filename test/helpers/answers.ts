// Every message a client transport hands its client, recorded as it arrived: the policy tests check
// that no name a principal may not know is in any of them.
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/client';

/** Record what `transport` delivers from now on (the SDK chains handlers: each one set is wrapped once). */
export function recordAnswers(transport: Transport): string[] {
  const seen: string[] = [];
  let wrapped: Transport['onmessage'];
  Object.defineProperty(transport, 'onmessage', {
    get: () => wrapped,
    set: (handler: Transport['onmessage']) => {
      wrapped =
        handler &&
        (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
          seen.push(JSON.stringify(message));
          handler(message, extra);
        });
    },
  });
  return seen;
}
