// How big V8's young generation may grow in a loadout process that serves one client or none (a
// one-shot command, `serve` over stdio): main.ts holds it before the command's code loads (the
// bundle's shared chunks are evaluated before that, and by then V8 has grown the young generation
// to 8 MB on Node 20).
//
// V8 doubles its young generation (up to 2 × 16 MB) whenever many objects survive a scavenge, as
// they do while loadout reads its state (catalog.json's definitions, the search index): at 5,000
// tools that growth was 24 MB of `loadout search`'s peak and of a gateway's first search, and it
// bought them no time. Each agent session starts its own stdio gateway, so those megabytes count
// once per session. `serve --http` is left to V8: one process answers many callers at once, and
// one whose young generation grew forwards concurrent calls with less CPU (about 2.5 µs of 17 per
// call with 8 callers on Node 20), which outweighs the 24 MB. A node flag the user gives for the
// young generation (NODE_OPTIONS=--max-semi-space-size=16) leaves V8's growth as it is. A later V8
// that holds the factor at 2 or more takes the setting and grows as before.
import { setFlagsFromString } from 'node:v8';

/** Keep V8's young generation at its size now for the rest of the process, unless a node flag of the user sizes it. */
export function holdYoungGeneration(): void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /semi[-_]space/.test(arg));
  if (!given) setFlagsFromString('--semi-space-growth-factor=1');
}
