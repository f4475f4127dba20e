// How much each bench row repeats: the full run (stable medians within 3 minutes on 2 cores)
// and --quick (tiny counts, so a test can run every row in seconds).
import type { Tool } from '@modelcontextprotocol/server';

/** Repetition counts of one bench run. */
export interface BenchScale {
  /** Calls before timing starts (JIT warm-up, lazy start). */
  warmupCalls: number;
  /** Timed sequential calls per path (direct, relay, loadout). */
  sequentialCalls: number;
  /** Sequential calls per path before switching to the next path (interleaving evens out noise). */
  batch: number;
  /** Calls each of the 8 concurrent callers makes per round. */
  callsPerCaller: number;
  throughputRounds: number;
  /** Spawns per configuration for warm start and cold first call. */
  startRepeats: number;
  equipRepeats: number;
  searchQueries: number;
  /** Calls between the two memory readings (and again for the growth check). */
  memoryCalls: number;
}

/** The real run. */
export const FULL_SCALE: BenchScale = {
  warmupCalls: 300,
  sequentialCalls: 3000,
  batch: 100,
  callsPerCaller: 250,
  throughputRounds: 4,
  startRepeats: 10,
  equipRepeats: 20,
  searchQueries: 300,
  memoryCalls: 10_000,
};

/** --quick: every row runs, numbers are not meaningful. */
export const QUICK_SCALE: BenchScale = {
  warmupCalls: 5,
  sequentialCalls: 20,
  batch: 10,
  callsPerCaller: 5,
  throughputRounds: 1,
  startRepeats: 1,
  equipRepeats: 2,
  searchQueries: 5,
  memoryCalls: 50,
};

/** What every row gets. */
export interface BenchContext {
  scale: BenchScale;
  /** The echo fixture's tool definitions (listed once at bench start) for cached setups. */
  echoTools: Tool[];
}
