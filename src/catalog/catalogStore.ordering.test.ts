// The catalog's entry of a server is changed by two writers at once on a cold start: discovery
// (every list) and the tool-list watch (tools only, after the server says tools/list_changed).
// Each must change only what it listed, in the order the listings were asked for, in memory and
// in catalog.json: the watch's tools-only write once replaced discovery's prompts and resources.
import type { Tool } from '@modelcontextprotocol/server';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogStore, readDefinitionCache } from './index.js';
import { GatewaySettingsSchema, ServerConfigSchema } from '../config/index.js';
import { ServerPool, type PoolEvent } from '../downstream/index.js';
import { watchToolListChanges } from '../runtime/toolListWatch.js';
import { silentLogger, type Logger } from '../shared/index.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

type Definitions = Awaited<ReturnType<ServerPool['listDefinitions']>>;

/** A promise with its resolve function outside. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** A pool whose one server answers each listing when the test says so. */
class ScriptedPool extends ServerPool {
  readonly definitionRequests: Array<ReturnType<typeof deferred<Definitions>>> = [];
  readonly toolRequests: Array<ReturnType<typeof deferred<Tool[]>>> = [];
  readonly #listeners: Array<(event: PoolEvent) => void> = [];
  #asked = deferred<void>();

  constructor() {
    super({ server: ServerConfigSchema.parse({ command: 'node' }) }, { logger: silentLogger });
  }

  override listDefinitions(): Promise<Definitions> {
    return this.#ask(this.definitionRequests);
  }
  override listTools(): Promise<Tool[]> {
    return this.#ask(this.toolRequests);
  }
  override isConnected(): boolean {
    return true;
  }
  override stopIfIdle(): Promise<void> {
    return Promise.resolve();
  }
  override onEvent(listener: (event: PoolEvent) => void): () => void {
    this.#listeners.push(listener);
    return () => undefined;
  }

  /** Say tools/list_changed, as the server would. */
  toolsChanged(): void {
    for (const listener of this.#listeners) listener({ type: 'tools-changed', server: 'server' });
  }

  /** Resolves once a listing has been asked for since the last call. */
  async nextRequest(): Promise<void> {
    await this.#asked.promise;
    this.#asked = deferred<void>();
  }

  #ask<T>(requests: Array<ReturnType<typeof deferred<T>>>): Promise<T> {
    const request = deferred<T>();
    requests.push(request);
    this.#asked.resolve();
    return request.promise;
  }
}

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });
const everything = (tools: Tool[]): Definitions => ({
  tools,
  prompts: [{ name: 'simple-prompt' }],
  resources: [{ uri: 'demo://resource/1', name: 'one' }],
  resourceTemplates: [{ uriTemplate: 'demo://resource/{id}', name: 'any' }],
  capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} },
});

// Resolves when the watch has stored a re-listing (it logs each one).
function watchLogger(): { logger: Logger; stored: Promise<void> } {
  const done = deferred<void>();
  const logger: Logger = {
    ...silentLogger,
    child: () => logger,
    info: (_fields: unknown, message?: string) => void (message?.includes('catalog updated') && done.resolve()),
  };
  return { logger, stored: done.promise };
}

describe('CatalogStore ordering', () => {
  const dir = useTempDir('loadout-ordering-');

  const setup = () => {
    const pool = new ScriptedPool();
    const cacheFile = path.join(dir(), 'catalog.json');
    const { logger, stored } = watchLogger();
    const store = new CatalogStore({ pool, cacheFile, settings: GatewaySettingsSchema.parse({}), logger: silentLogger });
    watchToolListChanges(pool, store, logger);
    return { pool, store, cacheFile, watchStored: stored };
  };

  it('keeps discovery’s prompts and resources when a tool re-list lands after it', async () => {
    const { pool, store, cacheFile, watchStored } = setup();
    // The server registers more tools once initialized and says so; the re-list answers while
    // discovery is writing what it found (its file lock taken, its write not yet done).
    const discovery = store.discover(['server'], {
      onResult: () => setImmediate(() => pool.toolRequests[0]!.resolve([tool('echo'), tool('sample')])),
    });
    await pool.nextRequest();
    pool.toolsChanged();
    await pool.nextRequest();
    pool.definitionRequests[0]!.resolve(everything([tool('echo')]));
    await Promise.all([discovery, watchStored]);

    const expected = {
      tools: [tool('echo'), tool('sample')],
      prompts: [{ name: 'simple-prompt' }],
      resources: [{ uri: 'demo://resource/1', name: 'one' }],
      resourceTemplates: [{ uriTemplate: 'demo://resource/{id}', name: 'any' }],
    };
    expect(store.current.definitionsOf('server')).toMatchObject(expected);
    expect((await readDefinitionCache(cacheFile)).server).toMatchObject(expected);
  });

  it('keeps the tools of a later listing when an earlier one answers last', async () => {
    const { pool, store, cacheFile, watchStored } = setup();
    await store.ensureLoaded();
    // The watch asks first; discovery asks after it, so discovery's tools are the newer.
    pool.toolsChanged();
    await pool.nextRequest();
    const discovery = store.discover(['server']);
    await pool.nextRequest();
    pool.definitionRequests[0]!.resolve(everything([tool('echo'), tool('sample')]));
    await discovery;
    pool.toolRequests[0]!.resolve([tool('echo')]);
    await watchStored;

    const names = (tools: Tool[] | undefined) => tools?.map((entry) => entry.name);
    expect(names(store.current.definitionsOf('server')?.tools)).toEqual(['echo', 'sample']);
    expect(names((await readDefinitionCache(cacheFile)).server?.tools)).toEqual(['echo', 'sample']);
    expect(store.current.definitionsOf('server')?.prompts).toEqual([{ name: 'simple-prompt' }]);
  });
});
