// How big V8's young generation may grow in any loadout process: imported by main.ts first, so it
// holds from the moment loadout's code has loaded (the bundle's shared chunks are evaluated before
// it, and by then V8 has grown the young generation to 8 MB on Node 20).
//
// V8 doubles its young generation (up to 2 × 16 MB) whenever many objects survive a scavenge, as
// they do while loadout reads its state (catalog.json's definitions, the search index): at 5,000
// tools that growth was 24 MB of `loadout search`'s 134 MB peak and of a gateway's first search,
// and it bought no time (the same CPU time for a search, and for forwarded calls in the bench, with
// the young generation held at 8 MB). So it is held where it is. A node flag the user gives for
// the young generation (NODE_OPTIONS=--max-semi-space-size=16) leaves V8's growth as it is. A
// later V8 that holds the factor at 2 or more takes the setting and grows as before.
import { setFlagsFromString } from 'node:v8';

const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /semi[-_]space/.test(arg));
if (!given) setFlagsFromString('--semi-space-growth-factor=1');
