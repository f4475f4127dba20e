// The equipped toolset of each caller of modern (2026-07-28) HTTP. That era has no session: the
// tools page says tools/list "MUST NOT vary per-connection or as a side effect of other requests
// on the connection" but "MAY vary by the authorization presented on the request". So the set
// belongs to the principal: the bearer token (by its hash, never the token itself), or `local`
// without one. Each principal's set lives in `<data>/principals/<id>.json`, so every loadout
// process on the data dir serves the same set: a request first compares the file's identity
// (inode, mtime: one stat) with what this process last read or wrote, and the principal's change
// bus watches the directory while a subscriptions/listen stream is open, so an equip served by
// another process reaches this process's listeners too.
import { InMemoryServerEventBus, type ServerEvent, type ServerEventBus } from '@modelcontextprotocol/server';
import { Mutex } from 'async-mutex';
import { createHash } from 'node:crypto';
import { statSync, watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { ToolsetNameSchema, readTextIfExists, withFileLock, writeTextAtomic } from '../config/index.js';
import type { RegistryChange, ToolRegistry } from '../registry/index.js';
import { errorMessage } from '../shared/index.js';
import type { GatewayContext } from './context.js';
import { newToolRegistry, toolsetSelection, type SharedEquipment } from './session.js';
import type { HubMember } from './sessionHub.js';

/** The principal of requests that present no token (a gateway started without --token). */
export const LOCAL_PRINCIPAL = 'local';

/** The principal a bearer token stands for: a hash, so the token itself is never stored. */
export function principalOfToken(token: string | undefined): string {
  return token === undefined ? LOCAL_PRINCIPAL : createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 32);
}

const PrincipalRecordSchema = z.strictObject({ toolset: ToolsetNameSchema.nullable() });

// The file's identity as this process last saw it: an atomic write replaces the inode.
const ABSENT = 'absent';
function fileStamp(file: string): string {
  try {
    // Synchronous: one stat syscall of a small local file; the promise form costs several times
    // more CPU (a thread-pool round trip), and every modern request makes one.
    const { ino, mtimeMs, size } = statSync(file);
    return `${ino}:${mtimeMs}:${size}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    throw error;
  }
}

/** One principal's equipped set in this process, kept in step with its file. */
class PrincipalToolset implements SharedEquipment {
  readonly registry: ToolRegistry;
  readonly member: HubMember;
  /** Change events for this principal's subscriptions/listen streams (see PrincipalEventBus). */
  readonly bus: PrincipalEventBus;
  readonly #context: GatewayContext;
  readonly #file: string;
  readonly #initial: () => Promise<string | null>;
  readonly #lock = new Mutex();
  #stamp: string | undefined;
  #syncQueued = false;

  constructor(context: GatewayContext, file: string, initial: () => Promise<string | null>) {
    this.#context = context;
    this.#file = file;
    this.#initial = initial;
    this.registry = newToolRegistry(context);
    // Its tasks are owned by the principal; loadout's own notices have no stream to go to in this era.
    this.member = { servers: () => this.registry.snapshot.servers, send: () => undefined };
    this.bus = new PrincipalEventBus(
      path.dirname(file),
      path.basename(file),
      () => this.syncSoon(),
      (error) => context.logger.debug({ mod: 'http', err: errorMessage(error) }, 'listen stream event failed'),
    );
  }

  /** Bring the set up to date with the file (another process may have changed it): one stat when it has not. */
  sync(): Promise<void> {
    return this.#lock.runExclusive(() => this.#sync());
  }

  /** sync() when the directory changed, once for a burst of changes. */
  syncSoon(): void {
    if (this.#syncQueued) return;
    this.#syncQueued = true;
    void this.#lock
      .runExclusive(() => {
        this.#syncQueued = false;
        return this.#sync();
      })
      .catch((error: unknown) =>
        this.#context.logger.warn({ mod: 'http', err: errorMessage(error) }, 'could not re-read a principal toolset'),
      );
  }

  /** Equip for this principal: recorded first (so any process serves it next), then applied and announced. */
  equip(name: string): Promise<RegistryChange> {
    return this.#lock.runExclusive(async () => {
      const selection = await toolsetSelection(this.#context, name);
      await this.#record(selection.toolset);
      return this.#announce(await this.registry.equip(selection));
    });
  }

  unequip(): Promise<RegistryChange> {
    return this.#lock.runExclusive(async () => {
      await this.#record(null);
      return this.#announce(await this.registry.unequip());
    });
  }

  /** Rebuild against the current catalog and health, announcing a change. */
  async refresh(): Promise<void> {
    try {
      this.#announce(await this.registry.refresh());
    } catch (error) {
      this.#context.logger.error({ mod: 'http', err: errorMessage(error) }, 'refreshing exposed tools failed');
    }
  }

  async #sync(): Promise<void> {
    const stamp = fileStamp(this.#file);
    if (stamp === this.#stamp) return;
    const first = this.#stamp === undefined;
    this.#stamp = stamp;
    const toolset = stamp === ABSENT ? (first ? await this.#initial() : null) : await this.#read();
    if (toolset === undefined) return;
    if (toolset === null) {
      this.#announce(await this.registry.unequip());
      return;
    }
    if (first) {
      // The toolset's tools come from the cached catalog; uncached servers join it after discovery.
      void this.#context.ready();
      await this.#context.catalog.ensureLoaded();
    }
    try {
      this.#announce(await this.registry.equip(await toolsetSelection(this.#context, toolset)));
    } catch (error) {
      this.#context.logger.warn({ mod: 'http', toolset, err: errorMessage(error) }, 'could not equip the principal toolset');
    }
  }

  // The recorded toolset; undefined (the set left as it is) when the file cannot be read.
  async #read(): Promise<string | null | undefined> {
    try {
      const text = await readTextIfExists(this.#file);
      return text === undefined ? null : PrincipalRecordSchema.parse(JSON.parse(text)).toolset;
    } catch (error) {
      this.#context.logger.warn({ mod: 'http', file: this.#file, err: errorMessage(error) }, 'unreadable principal toolset file');
      return undefined;
    }
  }

  async #record(toolset: string | null): Promise<void> {
    await withFileLock(this.#file, async () => {
      await writeTextAtomic(this.#file, `${JSON.stringify({ toolset })}\n`);
      // Under the lock no other process can have replaced it since: this stamp is this write's.
      this.#stamp = fileStamp(this.#file);
    });
  }

  #announce(change: RegistryChange): RegistryChange {
    if (change.changed) this.bus.publish({ kind: 'tools_list_changed' });
    if (change.promptsChanged) this.bus.publish({ kind: 'prompts_list_changed' });
    if (change.resourcesChanged) this.bus.publish({ kind: 'resources_list_changed' });
    return change;
  }
}

/**
 * The change bus of one principal's subscriptions/listen streams: it publishes to this process's
 * listeners, and while any listens it watches the principal's file, so a change another process
 * made (`onOutsideChange` re-reads it and publishes what changed) reaches them as well.
 */
class PrincipalEventBus implements ServerEventBus {
  readonly #local: InMemoryServerEventBus;
  readonly #dir: string;
  readonly #fileName: string;
  readonly #onOutsideChange: () => void;
  #listeners = 0;
  #watcher: FSWatcher | undefined;

  constructor(dir: string, fileName: string, onOutsideChange: () => void, onError: (error: Error) => void) {
    this.#local = new InMemoryServerEventBus(onError);
    this.#dir = dir;
    this.#fileName = fileName;
    this.#onOutsideChange = onOutsideChange;
  }

  publish(event: ServerEvent): void {
    this.#local.publish(event);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const unsubscribe = this.#local.subscribe(listener);
    if (this.#listeners++ === 0) this.#watch();
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      unsubscribe();
      if (--this.#listeners === 0) this.close();
    };
  }

  /** Stop watching (the last listener left, or the gateway closes). */
  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #watch(): void {
    try {
      // The directory, not the file: an atomic write renames a new file over it, which a watch on the old inode would miss.
      this.#watcher = watch(this.#dir, (_event, name) => {
        if (name === null || name === this.#fileName) this.#onOutsideChange();
      });
      this.#watcher.on('error', () => this.close());
    } catch {
      // Requests still see every change (each checks the file first); only listeners elsewhere miss them.
      this.#watcher = undefined;
    }
    // A change made between the stream's last request and its watch starting is not missed.
    this.#onOutsideChange();
  }
}

/** The principals this process has served, created on first use. */
export class PrincipalToolsets {
  readonly #context: GatewayContext;
  readonly #dir: string;
  readonly #initial: () => Promise<string | null>;
  readonly #principals = new Map<string, PrincipalToolset>();
  readonly #stopWatchingCatalog: () => void;
  #dirMade: Promise<unknown> | undefined;

  /** `initial`: the toolset of a principal with no file yet (--equip, or the one remembered in state.json). */
  constructor(context: GatewayContext, initial: () => Promise<string | null>) {
    this.#context = context;
    this.#dir = path.join(context.paths.dataDir, 'principals');
    this.#initial = initial;
    // A new catalog (discovery, config reload, promotion) may change what each principal exposes.
    this.#stopWatchingCatalog = context.catalog.onChange(() => this.refreshAll());
  }

  /** `principal`'s set, up to date with its file. */
  async current(principal: string): Promise<PrincipalToolset> {
    const toolset = this.get(principal);
    // The directory exists before anything watches it.
    await (this.#dirMade ??= mkdir(this.#dir, { recursive: true }));
    await toolset.sync();
    return toolset;
  }

  /** `principal`'s set as this process holds it (its file not re-read). */
  get(principal: string): PrincipalToolset {
    let toolset = this.#principals.get(principal);
    if (!toolset) {
      toolset = new PrincipalToolset(this.#context, path.join(this.#dir, `${principal}.json`), this.#initial);
      this.#principals.set(principal, toolset);
    }
    return toolset;
  }

  /** Rebuild every principal's set (the catalog or a server's health changed). */
  refreshAll(): void {
    for (const toolset of this.#principals.values()) void toolset.refresh();
  }

  /** Stop watching files and the catalog. */
  close(): void {
    this.#stopWatchingCatalog();
    for (const toolset of this.#principals.values()) toolset.bus.close();
  }
}
