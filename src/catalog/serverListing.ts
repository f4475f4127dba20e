// How one listing of a server changes its cached entry, list by list: each list the listing
// speaks for is replaced (or dropped when no longer declared, or kept beside the failure when its
// request failed); every other list stays as cached. Pure, so the same change can be applied to
// the catalog in memory and to catalog.json on disk.
import { OPTIONAL_LIST_NAMES, type ListFailures, type OptionalList, type ServerDefinitions } from '../downstream/index.js';
import type { CachedServerTools } from './definitionCache.js';

/** The parts of a server's entry a listing can speak for ('handshake': its capabilities and its words about itself). */
export type ListName = 'tools' | OptionalList | 'handshake';

/** Every part: what a complete listing (discovery, a re-check) speaks for. */
export const ALL_LISTS: readonly ListName[] = ['tools', ...OPTIONAL_LIST_NAMES, 'handshake'];

/** One listing of a server: what it found, and which parts of the entry it speaks for. */
export interface ServerListing {
  covers: readonly ListName[];
  definitions: ServerDefinitions;
  /** When it was listed (ISO time): the entry's discoveredAt. */
  listedAt: string;
}

/** The entry after `listing`. */
export function applyListing(entry: CachedServerTools | undefined, listing: ServerListing): CachedServerTools {
  const { covers, definitions } = listing;
  const next: CachedServerTools = { ...(entry ?? { tools: [] }), discoveredAt: listing.listedAt };
  if (covers.includes('tools')) next.tools = definitions.tools;
  if (covers.includes('handshake')) {
    if (definitions.capabilities) next.capabilities = definitions.capabilities;
    else delete next.capabilities;
    if (definitions.about) next.about = definitions.about;
    else delete next.about;
    if (definitions.era) next.era = definitions.era;
    else delete next.era;
  }
  const failures: ListFailures = { ...next.listFailures };
  for (const list of OPTIONAL_LIST_NAMES) {
    if (!covers.includes(list)) continue;
    const failure = definitions.listFailures?.[list];
    if (failure !== undefined) {
      // The list cached from an earlier listing stays: a server whose database is down for a
      // moment should not lose what it listed before.
      failures[list] = failure;
      continue;
    }
    delete failures[list];
    const items = definitions[list];
    if (items) Object.assign(next, { [list]: items });
    else delete next[list];
  }
  if (Object.keys(failures).length) next.listFailures = failures;
  else delete next.listFailures;
  return next;
}
