// An equipped set kept in a record every loadout process reads, so all of them serve the same
// one: the modern (2026-07-28) HTTP requests of a principal, or of one toolset's endpoint (see
// principalToolsets.ts). The record is a file in the data dir, or a row of the team store
// (toolsetRecords.ts has both). A request first compares the record's version (a file's stamp: one
// stat; in the store, the revision last heard: no round trip) with what this process last read or
// wrote, and re-reads it when they differ; the set's change bus watches the record while a
// subscriptions/listen stream is open, so an equip served by another process reaches this
// process's listeners as well.
import { InMemoryServerEventBus, type ServerEvent, type ServerEventBus } from '@modelcontextprotocol/server';
import { Mutex } from 'async-mutex';
import type { RegistryChange, ToolRegistry } from '../registry/index.js';
import { errorMessage } from '../shared/index.js';
import { isStoreAway } from '../store/index.js';
import { listenedResources } from './content/index.js';
import type { GatewayContext } from './context.js';
import { followRevocations } from './revocation.js';
import { ListenedResources } from './stdio/index.js';
import { OpenApps } from './openApps.js';
import { loadCachedCatalog, newToolRegistry, toolsetSelection, type SharedEquipment } from './session.js';
import type { HubMember } from './sessionHub.js';

/** Where a set's toolset is kept, and how it is read, recorded and watched. */
export interface ToolsetRecord {
  /** The record's version as this process knows it, found without I/O beyond a stat: it differs once the record may have changed. */
  version(): string;
  /**
   * Learn the record's version from where it is kept, for a request that must see a change made
   * through another process a moment ago (the store: one read, the change may not have been heard
   * yet; a file: nothing, its version is already read from the file).
   */
  check(): Promise<void>;
  /**
   * The toolset to serve (null: none), read when the version changed. `first`: nothing was read
   * before. Undefined leaves the set as it is (an unreadable record).
   */
  read(first: boolean): Promise<string | null | undefined>;
  /** Record `toolset` (null: none) and return the version this write made; or throw (the set is fixed, the store is down) having recorded nothing. */
  write(toolset: string | null): Promise<string>;
  /** Call `changed` whenever another process may have changed the record, until the returned stop (best effort: requests check the version anyway). */
  watch(changed: () => void): () => void;
}

/** A set kept in step with its record. */
export class RecordedToolset implements SharedEquipment {
  readonly registry: ToolRegistry;
  readonly member: HubMember;
  readonly openApps = new OpenApps();
  /** Change events for the set's subscriptions/listen streams. */
  readonly bus: RecordWatchingBus;
  readonly #context: GatewayContext;
  readonly #record: ToolsetRecord;
  readonly #lock = new Mutex();
  #version: string | undefined;
  #syncQueued = false;
  #listened: ListenedResources | undefined;
  #leaveHub: (() => void) | undefined;
  readonly #stopFollowingRevocations: () => void;

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
    // Its subscriptions and tasks end with the grant they were made under.
    this.#stopFollowingRevocations = followRevocations(context, this.member);
    this.bus = new RecordWatchingBus(
      record,
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
      const session = {
        member: this.member,
        openApps: this.openApps,
        settledSnapshot: async () => (await this.sync(), this.registry.snapshot),
      };
      this.#listened = new ListenedResources(listenedResources(this.#context, session));
    }
    return this.#listened;
  }

  /**
   * Bring the set up to date with its record (another process may have changed it): no read when
   * its version has not changed. `asked`: learn the version from the record first (ToolsetRecord.check).
   */
  sync(asked = false): Promise<void> {
    return this.#lock.runExclusive(async () => {
      if (asked) await this.#record.check();
      await this.#sync();
    });
  }

  /** sync() when the record may have changed, once for a burst of changes. */
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
      this.#version = await this.#record.write(selection.toolset);
      return this.#announce(await this.registry.equip(selection));
    });
  }

  unequip(): Promise<RegistryChange> {
    return this.#lock.runExclusive(async () => {
      this.#version = await this.#record.write(null);
      return this.#announce(await this.registry.unequip());
    });
  }

  /** Stop watching its record and leave the hub (its resource subscriptions with it): the gateway closes. */
  close(): void {
    this.bus.close();
    this.#stopFollowingRevocations();
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
    const version = this.#record.version();
    if (version === this.#version) return;
    const previous = this.#version;
    const first = previous === undefined;
    this.#version = version;
    try {
      await this.#apply(first);
    } catch (error) {
      // Not applied (the store is away and has no copy of it here): the next request tries again.
      this.#version = previous;
      throw error;
    }
  }

  async #apply(first: boolean): Promise<void> {
    const toolset = await this.#record.read(first);
    if (toolset === undefined) return;
    if (toolset === null) {
      this.#announce(await this.registry.unequip());
      return;
    }
    if (first) await loadCachedCatalog(this.#context);
    try {
      this.#announce(await this.registry.equip(await toolsetSelection(this.#context, toolset)));
    } catch (error) {
      // A toolset that cannot be read for now is the store's fault, not the set's: never served as none.
      if (isStoreAway(error)) throw error;
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
 * listeners, and while any listens it watches the set's record, so a change another process made
 * (`onOutsideChange` re-reads it and publishes what changed) reaches them as well.
 */
class RecordWatchingBus implements ServerEventBus {
  readonly #local: InMemoryServerEventBus;
  readonly #record: ToolsetRecord;
  readonly #onOutsideChange: () => void;
  #listeners = 0;
  #stopWatching: (() => void) | undefined;

  constructor(record: ToolsetRecord, onOutsideChange: () => void, onError: (error: Error) => void) {
    this.#local = new InMemoryServerEventBus(onError);
    this.#record = record;
    this.#onOutsideChange = onOutsideChange;
  }

  publish(event: ServerEvent): void {
    this.#local.publish(event);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const unsubscribe = this.#local.subscribe(listener);
    if (this.#listeners++ === 0) {
      this.#stopWatching = this.#record.watch(this.#onOutsideChange);
      // A change made between the stream's request and its watch starting is not missed.
      this.#onOutsideChange();
    }
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
    this.#stopWatching?.();
    this.#stopWatching = undefined;
  }
}
