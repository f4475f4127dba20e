// What each principal's sessions see of the shared services under `policy:`: a context whose
// catalog (and server configs) hold only what the principal is granted, so every reader of it
// (tools/list, the meta-tools, prompts, resources, completions, the server map) filters by
// reading, and a forbidden tool is simply not found. Views of a catalog are built once per
// catalog and grants; a new policy (servers.yaml edited) takes effect at once, and one that does
// not parse leaves the last good one in place (the config watcher keeps the last good file). A
// principal's groups are those of its latest token: a token naming other groups than the view
// was made with changes that view's grants at once, announced to its holders as a new policy is.
import type { CatalogStore, Catalog } from '../catalog/index.js';
import type { PolicySettings } from '../config/index.js';
import { Policy, type Grants, type Principal } from '../identity/index.js';
import { flattenToolName, resolveCatalogName } from '../registry/index.js';
import { RecentlyUsed } from '../shared/index.js';
import { OwnedToolsets } from '../toolsets/index.js';
import type { GatewayContext } from './context.js';
import type { LastStop } from './lastStop.js';
import { overlay } from './overlay.js';
import { restrictedOptimization } from './policyOptimization.js';

// Catalog → grants → that catalog as the grants allow; both weak, so old catalogs and policies go.
const views = new WeakMap<Catalog, WeakMap<Grants, Catalog>>();

function viewOf(catalog: Catalog, grants: Grants | undefined): Catalog {
  if (!grants) return catalog;
  let byGrants = views.get(catalog);
  if (!byGrants) views.set(catalog, (byGrants = new WeakMap()));
  let view = byGrants.get(grants);
  if (!view) byGrants.set(grants, (view = catalog.restrictedTo(grants)));
  return view;
}

/** The policy in force, and each principal's view of the gateway under it. */
export class PolicyViews {
  #context: GatewayContext | undefined;
  #lastStopOf: ((principal: Principal) => LastStop) | undefined;
  #policy: Policy;
  readonly #principalsInMemory: number;
  // Views are cheap to make again and hold nothing of their own: any may go, least recently used first.
  readonly #contexts: RecentlyUsed<string, PrincipalView>;
  readonly #listeners = new Set<() => void>();

  /** Made before the context it views, so that config sync can hand it a new policy from the start. */
  constructor(settings: PolicySettings, principalsInMemory: number) {
    this.#policy = new Policy(settings, principalsInMemory);
    this.#principalsInMemory = principalsInMemory;
    this.#contexts = new RecentlyUsed(principalsInMemory);
  }

  /** The shared context every view restricts, and where each principal's last stop is kept. */
  attach(context: GatewayContext, lastStopOf: (principal: Principal) => LastStop): void {
    this.#context = context;
    this.#lastStopOf = lastStopOf;
  }

  /** The caller of stdio sessions (and of HTTP without credentials): `policy.local`. */
  get localPrincipal(): Principal {
    return this.#policy.localPrincipal;
  }

  /** Adopt a new `policy:`; every view follows at once, and their holders hear of it. */
  update(settings: PolicySettings): void {
    this.#policy = new Policy(settings, this.#principalsInMemory);
    this.#announce();
  }

  /** The context `principal`'s sessions work with, under the groups `principal` names now. */
  contextFor(principal: Principal): GatewayContext {
    const base = this.#context;
    if (!base) throw new Error('PolicyViews.attach() comes before any view');
    const held = this.#contexts.get(principal.id);
    if (held) {
      held.follow(principal);
      return held.context;
    }
    // The principal as its latest token names it: other groups change its grants, announced as a
    // new policy is (every holder re-reads what it serves: sessions, shared sets, instructions).
    let current = principal;
    const follow = (next: Principal): void => {
      if (sameGroups(current.groups, next.groups)) return;
      current = next;
      this.#announce();
    };
    // Read on every filtered read: computed once per policy version and groups.
    let cached: { policy: Policy; principal: Principal; grants: Grants | undefined } | undefined;
    const grants = (): Grants | undefined => {
      const policy = this.#policy;
      if (cached?.policy !== policy || cached.principal !== current)
        cached = { policy, principal: current, grants: policy.grantsFor(current) };
      return cached.grants;
    };
    const granted = (server: string): boolean => grants()?.server(server) ?? true;
    const localPrincipal = (): Principal => this.#policy.localPrincipal;
    const catalog = restrictedCatalog(base.catalog, grants, (listener) => this.onChange(listener));
    // An identified caller has its own saved toolsets and its own last stop; the local one (stdio,
    // HTTP without an identity) has every toolset and the last stop of state.json, as before identities.
    const identified = principal.id !== 'local';
    const context: GatewayContext = {
      ...base,
      ...(identified
        ? {
            toolsets: new OwnedToolsets(base.toolsets, {
              owner: { id: principal.id, subject: principal.subject },
              granted: (name) => grants()?.toolset(name) ?? false,
            }),
            lastStop: this.#lastStopOf!(principal),
          }
        : {}),
      // `local` is whoever policy.local names now.
      get principal() {
        return principal.id === 'local' ? localPrincipal() : current;
      },
      get grants() {
        return grants();
      },
      hiddenByPolicy: (name) =>
        grants() !== undefined &&
        resolveCatalogName(base.catalog.current, name, base.naming) !== undefined &&
        resolveCatalogName(catalog.current, name, base.naming) === undefined,
      hiddenContent: (kind, nameOrUri) => {
        const limit = grants();
        if (!limit) return false;
        const whole = base.catalog.current;
        const servers = Object.keys(base.pool.configs);
        if (kind === 'resource') {
          const target = whole.resourceUris.resolve(nameOrUri, new Set(servers));
          return target !== undefined && !limit.resources(target.server);
        }
        return servers.some((server) =>
          (whole.definitionsOf(server)?.prompts ?? []).some(
            (prompt) =>
              !limit.prompt(server, prompt.name) && flattenToolName(`${server}.${prompt.name}`, base.naming.maxNameLength) === nameOrUri,
          ),
        );
      },
      // A server's discovery state names it: "not found" is all a caller may learn of one not granted.
      discovery: overlay(base.discovery, {
        states: () => () => base.discovery.states().filter((state) => granted(state.server)),
        state: () => (server: string) => (granted(server) ? base.discovery.state(server) : undefined),
      }),
      catalog,
      optimization: restrictedOptimization(base.optimization, catalog, grants),
      pool: overlay(base.pool, {
        config: () => (server: string) => (granted(server) ? base.pool.config(server) : undefined),
        configs: () => {
          const configs = base.pool.configs;
          return grants() ? Object.fromEntries(Object.entries(configs).filter(([server]) => granted(server))) : configs;
        },
      }),
    };
    this.#contexts.set(principal.id, { context, follow });
    return context;
  }

  /** Hear of each new policy (and of a principal's new groups); returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #announce(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** A principal's view, and how it follows the groups of that principal's latest token. */
interface PrincipalView {
  readonly context: GatewayContext;
  follow(principal: Principal): void;
}

function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

// The catalog store as `grants` allow it: its catalogs, map and server lists restricted; a new
// policy is announced to its listeners as a new catalog.
function restrictedCatalog(
  store: CatalogStore,
  grants: () => Grants | undefined,
  onPolicyChange: (listener: () => void) => () => void,
): CatalogStore {
  const current = (): Catalog => viewOf(store.current, grants());
  const granted = (server: string): boolean => grants()?.server(server) ?? true;
  return overlay(store, {
    current,
    undiscoveredServers: () => store.undiscoveredServers.filter(granted),
    brokenServerProblem: () => (server: string) => (granted(server) ? store.brokenServerProblem(server) : undefined),
    serverProblems: () => (options?: { brief?: boolean }) =>
      new Map([...store.serverProblems(options)].filter(([server]) => granted(server))),
    discoveryFailures: () => () => new Map([...store.discoveryFailures()].filter(([server]) => granted(server))),
    serverMap: () => async () => {
      const entries = await store.serverMap();
      const limit = grants();
      if (!limit) return entries;
      const summaries = current().serverSummaries();
      return entries
        .filter((entry) => limit.server(entry.server))
        .map(({ summary: _whole, ...entry }) => {
          const summary = summaries.get(entry.server);
          return summary ? { ...entry, summary } : entry;
        });
    },
    onChange: () => (listener: (catalog: Catalog) => void) => {
      const fromStore = store.onChange(() => listener(current()));
      const fromPolicy = onPolicyChange(() => listener(current()));
      return () => {
        fromStore();
        fromPolicy();
      };
    },
  });
}
