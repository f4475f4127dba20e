// Which MCP era a downstream server speaks, as found by a connection's negotiation (a
// `server/discover` probe, falling back to `initialize`), and when a verdict found earlier may be
// reused to skip the probe. A modern verdict keeps the server's DiscoverResult, so a start with it
// costs no round trip; a legacy one is dated, because a server upgraded since still answers
// `initialize` and would be spoken to in the old era forever.
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import type { DiscoverResult } from '@modelcontextprotocol/server';
import type { Client, PriorDiscovery } from '@modelcontextprotocol/client';
import * as z from 'zod';
import type { ProtocolEra } from '../shared/index.js';

export type { ProtocolEra };

/** A negotiation's outcome, kept in the catalog cache; `checkedAt` is when a probe found it (ISO time). */
export const EraVerdictSchema = z.discriminatedUnion('era', [
  z.object({
    era: z.literal('modern'),
    checkedAt: z.string(),
    // The server's own answer, passed back to the SDK as it came: checked for being an object only.
    discover: z.custom<DiscoverResult>((value) => typeof value === 'object' && value !== null && !Array.isArray(value)),
  }),
  z.object({ era: z.literal('legacy'), checkedAt: z.string() }),
]);
export type EraVerdict = z.infer<typeof EraVerdictSchema>;

/** Where the pool finds the verdict of a server's last negotiation (the catalog cache keeps them). */
export type EraMemory = (server: string) => Promise<EraVerdict | undefined>;

/** How long a legacy verdict is trusted before the server is probed again (it may have been upgraded). */
export const LEGACY_VERDICT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** The prior a connection starts from: a modern verdict always, a legacy one while it is fresh. */
export function usableVerdict(verdict: EraVerdict | undefined, now = Date.now()): EraVerdict | undefined {
  if (!verdict || verdict.era === 'modern') return verdict;
  const age = now - Date.parse(verdict.checkedAt);
  return age >= 0 && age < LEGACY_VERDICT_MAX_AGE_MS ? verdict : undefined;
}

/**
 * How long a stdio server may stay silent on the `server/discover` probe before it is taken for a
 * legacy one (some never answer a request before initialize). HTTP servers get the whole start
 * timeout: silence there is an outage, and the SDK fails the start.
 */
export const ERA_PROBE_TIMEOUT_MS = 5000;

// The code a modern server answers a request in an era it does not serve with.
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** What the SDK's connect takes for a verdict found before. */
export function priorDiscovery(verdict: EraVerdict): PriorDiscovery {
  return verdict.era === 'modern' ? { kind: 'modern', discover: verdict.discover } : { kind: 'legacy' };
}

/** What the connected client's negotiation found, dated now. */
export function verdictOf(client: Client): EraVerdict {
  const checkedAt = new Date().toISOString();
  const discover = client.getDiscoverResult();
  return client.getProtocolEra() === 'modern' && discover ? { era: 'modern', checkedAt, discover } : { era: 'legacy', checkedAt };
}

/** Whether `error` is a server's refusal of the protocol version loadout spoke. */
export function refusesProtocolVersion(error: unknown): boolean {
  return ProtocolError.isInstance(error) && error.code === UNSUPPORTED_PROTOCOL_VERSION;
}

/**
 * Whether `error`, from a server remembered as modern, refuses the era itself, so the verdict is
 * stale: an unsupported protocol version, a child that exited on the unfamiliar request, or (for
 * the listen stream, which every modern server serves) an unknown method.
 */
export function isEraRefusal(error: unknown, what: 'listen' | 'request'): boolean {
  if (refusesProtocolVersion(error)) return true;
  if (ProtocolError.isInstance(error)) return what === 'listen' && error.code === (ProtocolErrorCode.MethodNotFound as number);
  return SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed;
}
