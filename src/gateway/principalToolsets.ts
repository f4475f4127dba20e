// Whose equipped set a modern (2026-07-28) HTTP request is served with. That era has no session:
// the tools page says tools/list "MUST NOT vary per-connection or as a side effect of other
// requests on the connection" but "MAY vary by the authorization presented on the request". So on
// /mcp the set belongs to the principal (identity layer: an issuer's subject, a static token, or
// `local`), recorded under its id, a hash (in `<data>/principals/<id>.json`, or the team store's
// `equipped` records). On /mcp/toolsets/NAME it is that saved toolset, always: equipping there is
// refused, and the list changes only when the toolset is saved again or its tools change in the
// catalog. Both are RecordedToolsets, so every loadout process on the data dir (or the store)
// serves the same set.
import { RecentlyUsed } from '../shared/index.js';
import { LOADOUT_ATTR, type GaugeReading } from '../telemetry/index.js';
import type { Principal } from '../identity/index.js';
import type { TeamStore } from '../store/index.js';
import type { GatewayContext } from './context.js';
import { RecordedToolset } from './recordedToolset.js';
import { FileRecordPlace, StoreRecordPlace, type ToolsetRecordPlace } from './toolsetRecords.js';

/**
 * Whose set a modern request is served with: its principal's (on /mcp), or one toolset's (on
 * /mcp/toolsets/NAME) as its principal may see it.
 */
export type RequestScope = { kind: 'principal'; principal: Principal } | { kind: 'toolset'; toolset: string; principal: Principal };

/** One string per scope, for maps of what each scope has. */
export function scopeKey(scope: RequestScope): string {
  return scope.kind === 'principal' ? `principal ${scope.principal.id}` : `toolset ${scope.toolset} ${scope.principal.id}`;
}

/** The sets this process has served modern requests with, each created on first use. */
export class SharedToolsets {
  readonly #contextOf: (principal: Principal) => GatewayContext;
  // Bounded (gateway.principals_in_memory): an idle set is made again from its record when its principal comes back.
  readonly #records: ToolsetRecordPlace;
  readonly #sets: RecentlyUsed<string, RecordedToolset>;
  readonly #stopWatchingCatalog: () => void;

  /**
   * `initial`: the toolset of a principal with no record yet (--equip, or the one remembered for
   * that principal's next start); `contextOf`: what a principal may see (policyViews.ts); `store`: the team
   * store the records are kept in (without one, files in the data dir).
   */
  constructor(
    context: GatewayContext,
    initial: (principal: Principal) => Promise<string | null>,
    contextOf: (principal: Principal) => GatewayContext,
    store: TeamStore | undefined,
  ) {
    this.#sets = new RecentlyUsed(context.settings.principals_in_memory, { evictable: (set) => set.idle, onEvict: (set) => set.close() });
    this.#contextOf = contextOf;
    const options = { initial, logger: context.logger };
    this.#records = store
      ? new StoreRecordPlace(store, options)
      : new FileRecordPlace(context.paths.dataDir, context.paths.toolsetsDir, options);
    // A new catalog (discovery, config reload, promotion) may change what each set exposes.
    this.#stopWatchingCatalog = context.catalog.onChange(() => this.refreshAll());
  }

  /** The set of `scope`, up to date with its record (`asked`: as kept now, RecordedToolset.sync). */
  async current(scope: RequestScope, asked: boolean): Promise<RecordedToolset> {
    const set = this.get(scope);
    await set.sync(asked);
    return set;
  }

  /** The set of `scope` as this process holds it (its record not re-read). */
  get(scope: RequestScope): RecordedToolset {
    const key = scopeKey(scope);
    let set = this.#sets.get(key);
    if (!set) {
      const record = scope.kind === 'principal' ? this.#records.principal(scope.principal) : this.#records.toolset(scope.toolset);
      set = new RecordedToolset(this.#contextOf(scope.principal), record);
      this.#sets.set(key, set);
    }
    return set;
  }

  /**
   * How many tools the sets this process holds have equipped, together, for telemetry's gauge. Not
   * per principal: a static token's principal id is a hash of the token, and no label may carry it.
   */
  equippedTools(): GaugeReading {
    let value = 0;
    for (const set of this.#sets.values()) value += set.registry.snapshot.routes.size;
    return { value, attributes: { [LOADOUT_ATTR.principal]: 'principals' } };
  }

  /** Rebuild every set (the catalog, the policy or a server's health changed). */
  refreshAll(): void {
    for (const set of this.#sets.values()) void set.refresh();
  }

  /** Stop watching records and the catalog. */
  close(): void {
    this.#stopWatchingCatalog();
    this.#records.close();
    for (const set of this.#sets.values()) set.close();
  }
}
