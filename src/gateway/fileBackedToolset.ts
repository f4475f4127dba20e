// An equipped set that lives in a file, so every loadout process on the data dir serves the same
// one: the modern (2026-07-28) HTTP requests of a principal, or of one toolset's endpoint (see
// principalToolsets.ts). A request first compares the file's identity (inode, mtime, size: one
// stat) with what this process last read or wrote, and re-reads it when they differ; the set's
// change bus watches the file's directory while a subscriptions/listen stream is open, so an
// equip served by another process reaches this process's listeners as well.
import { InMemoryServerEventBus, type ServerEvent, type ServerEventBus } from '@modelcontextprotocol/server';
import { Mutex } from 'async-mutex';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { ABSENT_FILE_STAMP, fileStamp } from '../config/index.js';
import type { RegistryChange, ToolRegistry } from '../registry/index.js';
import { errorMessage } from '../shared/index.js';
import { listenedResources } from './content/contentHandlers.js';
import type { GatewayContext } from './context.js';
import { ListenedResources } from './stdio/listenSubscriptions.js';
import { loadCachedCatalog, newToolRegistry, toolsetSelection, type SharedEquipment } from './session.js';
import type { HubMember } from './sessionHub.js';

/** Where a set's toolset is kept, and how it is read and recorded. */
export interface ToolsetRecord {
  /** The file whose change means the toolset may have changed. */
  readonly file: string;
  /**
   * The toolset to serve (null: none), read when the file changed. `exists`: whether the file is
   * there; `first`: nothing was read before. Undefined leaves the set as it is (an unreadable file).
   */
  read(exists: boolean, first: boolean): Promise<string | null | undefined>;
  /** Record `toolset` (null: none) in the file and return its stamp (fileStamp), taken under the file's lock; or throw when the set is fixed. */
  write(toolset: string | null): Promise<string>;
}

/** A set kept in step with its record file. */
export class FileBackedToolset implements SharedEquipment {
  readonly registry: ToolRegistry;
  readonly member: HubMember;
  /** Change events for the set's subscriptions/listen streams. */
  readonly bus: FileWatchingBus;
  readonly #context: GatewayContext;
  readonly #record: ToolsetRecord;
  readonly #lock = new Mutex();
  #stamp: string | undefined;
  #syncQueued = false;
  #listened: ListenedResources | undefined;
  #leaveHub: (() => void) | undefined;

  constructor(context: GatewayContext, record: ToolsetRecord) {
    this.#context = context;
    this.#record = record;
    this.registry = newToolRegistry(context);
    // It owns its tasks. A resource update goes to the listen streams that name the resource (the
    // SDK's listen router filters by URI); loadout's own notices have no stream to go to in this era.
    this.member = {
      servers: () => this.registry.snapshot.servers,
      send: (notification) => {
        if (notification.method === 'notifications/resources/updated')
          this.bus.publish({ kind: 'resource_updated', uri: notification.params.uri, params: notification.params });
      },
      servesModernEra: () => true,
    };
    this.bus = new FileWatchingBus(
      record.file,
      () => this.syncSoon(),
      (error) => context.logger.debug({ mod: 'http', err: errorMessage(error) }, 'listen stream event failed'),
    );
  }

  /**
   * The resources this process's listen streams of the set name, held downstream while one does
   * (the set joins the hub, which delivers their updates, on the first).
   */
  get listened(): ListenedResources {
    if (!this.#listened) {
      this.#leaveHub = this.#context.hub.join(this.member);
      const session = { member: this.member, settledSnapshot: async () => (await this.sync(), this.registry.snapshot) };
      this.#listened = new ListenedResources(listenedResources(this.#context, session));
    }
    return this.#listened;
  }

  /** Bring the set up to date with its file (another process may have changed it): one stat when it has not. */
  sync(): Promise<void> {
    return this.#lock.runExclusive(() => this.#sync());
  }

  /** sync() when the file's directory changed, once for a burst of changes. */
  syncSoon(): void {
    if (this.#syncQueued) return;
    this.#syncQueued = true;
    void this.#lock
      .runExclusive(() => {
        this.#syncQueued = false;
        return this.#sync();
      })
      .catch((error: unknown) => this.#context.logger.warn({ mod: 'http', err: errorMessage(error) }, 'could not re-read an equipped set'));
  }

  /** Equip: recorded first (so any process serves it next), then applied and announced. */
  equip(name: string): Promise<RegistryChange> {
    return this.#lock.runExclusive(async () => {
      const selection = await toolsetSelection(this.#context, name);
      this.#stamp = await this.#record.write(selection.toolset);
      return this.#announce(await this.registry.equip(selection));
    });
  }

  unequip(): Promise<RegistryChange> {
    return this.#lock.runExclusive(async () => {
      this.#stamp = await this.#record.write(null);
      return this.#announce(await this.registry.unequip());
    });
  }

  /** Stop watching its file and leave the hub (its resource subscriptions with it): the gateway closes. */
  close(): void {
    this.bus.close();
    this.#leaveHub?.();
  }

  /**
   * Whether nothing depends on this object staying: no listen stream, no change under way, no task
   * it owns. An idle set may be dropped and made again from its file.
   */
  get idle(): boolean {
    return !this.bus.listening && !this.#lock.isLocked() && this.#context.tasks.serversOf(this.member).length === 0;
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
    const stamp = fileStamp(this.#record.file);
    if (stamp === this.#stamp) return;
    const first = this.#stamp === undefined;
    this.#stamp = stamp;
    const toolset = await this.#record.read(stamp !== ABSENT_FILE_STAMP, first);
    if (toolset === undefined) return;
    if (toolset === null) {
      this.#announce(await this.registry.unequip());
      return;
    }
    if (first) await loadCachedCatalog(this.#context);
    try {
      this.#announce(await this.registry.equip(await toolsetSelection(this.#context, toolset)));
    } catch (error) {
      this.#context.logger.warn({ mod: 'http', toolset, err: errorMessage(error) }, 'could not equip a recorded toolset');
    }
  }

  #announce(change: RegistryChange): RegistryChange {
    if (change.changed) this.bus.publish({ kind: 'tools_list_changed' });
    if (change.promptsChanged) this.bus.publish({ kind: 'prompts_list_changed' });
    if (change.resourcesChanged) this.bus.publish({ kind: 'resources_list_changed' });
    return change;
  }
}

/**
 * The change bus of one set's subscriptions/listen streams: it publishes to this process's
 * listeners, and while any listens it watches the set's file, so a change another process made
 * (`onOutsideChange` re-reads it and publishes what changed) reaches them as well.
 */
class FileWatchingBus implements ServerEventBus {
  readonly #local: InMemoryServerEventBus;
  readonly #file: string;
  readonly #onOutsideChange: () => void;
  #listeners = 0;
  #watcher: FSWatcher | undefined;

  constructor(file: string, onOutsideChange: () => void, onError: (error: Error) => void) {
    this.#local = new InMemoryServerEventBus(onError);
    this.#file = file;
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

  /** Whether a listen stream of this process listens. */
  get listening(): boolean {
    return this.#listeners > 0;
  }

  /** Stop watching (the last listener left, or the gateway closes). */
  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #watch(): void {
    const name = path.basename(this.#file);
    try {
      // The directory, not the file: an atomic write renames a new file over it, which a watch on the old inode would miss.
      this.#watcher = watch(path.dirname(this.#file), (_event, changed) => {
        if (changed === null || changed === name) this.#onOutsideChange();
      });
      this.#watcher.on('error', () => this.close());
    } catch {
      // Requests still see every change (each checks the file first); only listeners here miss those made elsewhere.
      this.#watcher = undefined;
    }
    // A change made between the stream's request and its watch starting is not missed.
    this.#onOutsideChange();
  }
}
