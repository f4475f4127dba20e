// Room for one more 2025-era session under --max-sessions, shared fairly between principals: a
// new session ends an idle one (no POST open) of its own principal's, or of a principal holding
// more sessions than its own would, never one of a principal holding fewer. Knows nothing of HTTP.
import type { Logger } from '../../shared/index.js';
import type { Principal } from '../../identity/index.js';

/** What the room is decided on, of each session held. */
export interface RoomedSession {
  /** POSTs open: a request or call under way, which ending the session would cut off. */
  readonly openPosts: number;
  readonly lastActiveMs: number;
  /** Who started it. */
  readonly principal: Principal;
  readonly transport: { close(): Promise<void> };
}

/** The limits of sessions held at once. */
export interface SessionLimits {
  /** Most sessions at once (--max-sessions). */
  readonly maxSessions: number;
  /** Most sessions of one principal at once (--max-sessions-per-principal); past it a new one ends one of its own. */
  readonly maxPerPrincipal: number;
}

/**
 * Whether `principal` may start (or resume) one more session, ending an idle one if it must (gone
 * from `sessions` at once, its close under way). False when every session it may end has a POST open.
 */
export function makeRoom<S extends RoomedSession>(
  sessions: Map<string, S>,
  principal: Principal,
  limits: SessionLimits,
  logger: Logger,
): boolean {
  const counts = new Map<string, number>();
  for (const session of sessions.values()) counts.set(session.principal.id, (counts.get(session.principal.id) ?? 0) + 1);
  const own = counts.get(principal.id) ?? 0;
  const overOwn = own >= limits.maxPerPrincipal;
  if (!overOwn && sessions.size < limits.maxSessions) return true;
  // Whose sessions may end, most held first: its own (as holding one more, winning ties), and only
  // at --max-sessions another principal's holding more than that.
  const holds = (id: string): number => (id === principal.id ? own + 1 : (counts.get(id) ?? 0));
  const candidates = [...counts.keys()]
    .filter((id) => id === principal.id || (!overOwn && holds(id) > own + 1))
    .sort((a, b) => holds(b) - holds(a) || (a === principal.id ? -1 : b === principal.id ? 1 : 0));
  for (const id of candidates) {
    const ended = endLongestIdle(sessions, id);
    if (!ended) continue;
    const limit = overOwn ? '--max-sessions-per-principal' : '--max-sessions';
    logger.info({ session: ended, principal: id }, `session ended to make room for a new one (${limit})`);
    return true;
  }
  return false;
}

// Ends the session of principal `id` active least recently among its sessions with no POST open (a
// client holding only its notification stream is idle: it will get 404 and start again); its id, or
// undefined when each has one.
function endLongestIdle<S extends RoomedSession>(sessions: Map<string, S>, id: string): string | undefined {
  let oldest: [string, S] | undefined;
  for (const entry of sessions) {
    const [, session] = entry;
    if (session.principal.id !== id || session.openPosts > 0) continue;
    if (!oldest || session.lastActiveMs < oldest[1].lastActiveMs) oldest = entry;
  }
  if (!oldest) return undefined;
  // Gone from the map now, not when its close settles: the new session takes its place at once.
  sessions.delete(oldest[0]);
  void oldest[1].transport.close();
  return oldest[0];
}
