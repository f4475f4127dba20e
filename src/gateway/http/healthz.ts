// `GET /healthz`, for supervisors and load balancers: `200 {"status":"ok"}` while this process
// serves. With a team store, `503` naming the store while this replica is not listening to it
// (its listening connection was lost and is being re-opened with backoff): it cannot hear the
// other replicas' changes (an equip, a saved toolset) until then, so it may serve a stale set, and
// a balancer should prefer another replica. Its calls of equipped tools still work. While it drains
// (SIGTERM: httpDrain.ts), `503 {"status":"draining"}`: it takes no new requests.
import type { TeamStore } from '../../store/index.js';

/** The status of /healthz, and its JSON body. */
export function healthAnswer(store: TeamStore | undefined, draining: boolean): [status: 200 | 503, body: Record<string, string>] {
  if (draining) return [503, { status: 'draining' }];
  if (!store || store.listening) return [200, { status: 'ok' }];
  return [
    503,
    {
      status: 'not-listening',
      store: store.description,
      reason: `not listening to store ${store.description} for the other replicas' changes (reconnecting): this replica may serve stale toolsets until it listens again`,
    },
  ];
}
