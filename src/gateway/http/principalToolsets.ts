// Whose equipped set a modern (2026-07-28) HTTP request is served with. That era has no session:
// the tools page says tools/list "MUST NOT vary per-connection or as a side effect of other
// requests on the connection" but "MAY vary by the authorization presented on the request". So on
// /mcp the set belongs to the principal (identity layer: an issuer's subject, a static token, or
// `local`), recorded in `<data>/principals/<id>.json` under its id, a hash. On /mcp/toolsets/NAME it is
// that saved toolset, always: equipping there is refused, and the list changes only when the
// toolset is saved again or its tools change in the catalog. Both are FileBackedToolsets, so every
// loadout process on the data dir serves the same set.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { ToolsetNameSchema, fileStamp, readTextIfExists, withFileLock, writeTextAtomic } from '../../config/index.js';
import { LoadoutError, RecentlyUsed, errorMessage } from '../../shared/index.js';
import { LOADOUT_ATTR, type GaugeReading } from '../../telemetry/index.js';
import type { Principal } from '../../identity/index.js';
import { ALL_TOOLSET } from '../../toolsets/index.js';
import type { GatewayContext } from '../context.js';
import { FileBackedToolset, type ToolsetRecord } from '../fileBackedToolset.js';

/**
 * Whose set a modern request is served with: its principal's (on /mcp), or one toolset's (on
 * /mcp/toolsets/NAME) as its principal may see it.
 */
export type RequestScope = { kind: 'principal'; principal: Principal } | { kind: 'toolset'; toolset: string; principal: Principal };

/** One string per scope, for maps of what each scope has. */
export function scopeKey(scope: RequestScope): string {
  return scope.kind === 'principal' ? `principal ${scope.principal.id}` : `toolset ${scope.toolset} ${scope.principal.id}`;
}

const PrincipalRecordSchema = z.strictObject({ toolset: ToolsetNameSchema.nullable() });

/** The sets this process has served modern requests with, each created on first use. */
export class SharedToolsets {
  readonly #context: GatewayContext;
  readonly #principalsDir: string;
  readonly #initial: () => Promise<string | null>;
  readonly #contextOf: (principal: Principal) => GatewayContext;
  // Bounded (gateway.principals_in_memory): an idle set is made again from its file when its principal comes back.
  readonly #sets: RecentlyUsed<string, FileBackedToolset>;
  readonly #stopWatchingCatalog: () => void;
  #dirMade: Promise<unknown> | undefined;

  /**
   * `initial`: the toolset of a principal with no record yet (--equip, or the one remembered in
   * state.json); `contextOf`: what a principal may see (policyViews.ts).
   */
  constructor(context: GatewayContext, initial: () => Promise<string | null>, contextOf: (principal: Principal) => GatewayContext) {
    this.#context = context;
    this.#sets = new RecentlyUsed(context.settings.principals_in_memory, { evictable: (set) => set.idle, onEvict: (set) => set.close() });
    this.#contextOf = contextOf;
    this.#principalsDir = path.join(context.paths.dataDir, 'principals');
    this.#initial = initial;
    // A new catalog (discovery, config reload, promotion) may change what each set exposes.
    this.#stopWatchingCatalog = context.catalog.onChange(() => this.refreshAll());
  }

  /** The set of `scope`, up to date with its file. */
  async current(scope: RequestScope): Promise<FileBackedToolset> {
    const set = this.get(scope);
    // The directory exists before anything watches it.
    if (scope.kind === 'principal') await (this.#dirMade ??= mkdir(this.#principalsDir, { recursive: true }));
    await set.sync();
    return set;
  }

  /** The set of `scope` as this process holds it (its file not re-read). */
  get(scope: RequestScope): FileBackedToolset {
    const key = scopeKey(scope);
    let set = this.#sets.get(key);
    if (!set) {
      const record = scope.kind === 'principal' ? this.#principalRecord(scope.principal.id) : toolsetRecord(this.#context, scope.toolset);
      set = new FileBackedToolset(this.#contextOf(scope.principal), record);
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

  /** Stop watching files and the catalog. */
  close(): void {
    this.#stopWatchingCatalog();
    for (const set of this.#sets.values()) set.close();
  }

  #principalRecord(principal: string): ToolsetRecord {
    const file = path.join(this.#principalsDir, `${principal}.json`);
    const { logger } = this.#context;
    return {
      file,
      read: async (exists, first) => {
        // Before its first equip a principal gets what a new session would; a deleted record means none.
        if (!exists) return first ? this.#initial() : null;
        try {
          const text = await readTextIfExists(file);
          return text === undefined ? null : PrincipalRecordSchema.parse(JSON.parse(text)).toolset;
        } catch (error) {
          logger.warn({ mod: 'http', file, err: errorMessage(error) }, 'unreadable principal toolset file; serving the set as it was');
          return undefined;
        }
      },
      write: (toolset) =>
        withFileLock(file, async () => {
          await writeTextAtomic(file, `${JSON.stringify({ toolset })}\n`);
          // Under the lock no other process can have replaced it since: this stamp is this write's.
          return fileStamp(file);
        }),
    };
  }
}

// A toolset endpoint's set is the toolset itself: its file saved again re-reads it, deleted empties it.
function toolsetRecord(context: GatewayContext, toolset: string): ToolsetRecord {
  return {
    file: path.join(context.toolsets.dir, `${toolset}.yaml`),
    // `all` has no file and is always there.
    read: (exists) => Promise.resolve(exists || toolset === ALL_TOOLSET ? toolset : null),
    write: () =>
      Promise.reject(
        new LoadoutError(
          'INVALID_ARGUMENT',
          `This endpoint (/mcp/toolsets/${toolset}) always serves toolset '${toolset}'; equip another toolset at /mcp`,
        ),
      ),
  };
}
