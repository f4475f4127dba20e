import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ServerConfigSchema, type ServerConfig } from '../config/index.js';
import { silentLogger } from '../shared/index.js';
import type { DownstreamConnection } from './connection.js';
import { ServerHealth, type HealthPool } from './health.js';
import type { PoolEvent } from './pool.js';

/** A stand-in pool: `up` decides whether a start succeeds; connections answer pings per `pingOk`. */
class FakePool implements HealthPool {
  readonly configMap = new Map<string, ServerConfig>();
  readonly live = new Map<string, DownstreamConnection>();
  readonly starts: string[] = [];
  readonly discarded: string[] = [];
  up = true;
  pingOk = true;
  #listener: ((event: PoolEvent) => void) | undefined;

  add(server: string, config: Partial<ServerConfig>): void {
    this.configMap.set(server, ServerConfigSchema.parse({ command: 'x', ...config }));
  }
  onEvent(listener: (event: PoolEvent) => void): () => boolean {
    this.#listener = listener;
    return () => true;
  }
  config(server: string): ServerConfig | undefined {
    return this.configMap.get(server);
  }
  get configs(): Record<string, ServerConfig> {
    return Object.fromEntries(this.configMap);
  }
  isConnected(server: string): boolean {
    return this.live.has(server);
  }
  status(server: string): { state: 'stopped' | 'connected'; inFlight: number } {
    return { state: this.live.has(server) ? 'connected' : 'stopped', inFlight: 0 };
  }
  connection(server: string): Promise<DownstreamConnection> {
    const existing = this.live.get(server);
    if (existing) return Promise.resolve(existing);
    this.starts.push(server);
    if (!this.up) return Promise.reject(new Error('spawn failed'));
    const connection = {
      ping: async () => (this.pingOk ? undefined : Promise.reject(new Error('timeout'))),
    } as unknown as DownstreamConnection;
    this.live.set(server, connection);
    this.#listener?.({ type: 'connected', server });
    return Promise.resolve(connection);
  }
  discard(server: string): Promise<void> {
    this.discarded.push(server);
    this.crash(server);
    return Promise.resolve();
  }
  reconfigure(configs: Record<string, Partial<ServerConfig>>): void {
    this.configMap.clear();
    for (const [server, config] of Object.entries(configs)) this.add(server, config);
    this.#listener?.({ type: 'configured' });
  }
  crash(server: string): void {
    this.live.delete(server);
    this.#listener?.({ type: 'lost', server });
  }
}

describe('ServerHealth', () => {
  let pool: FakePool;
  let health: ServerHealth;
  let changes: Array<[string, boolean]>;
  beforeEach(() => {
    vi.useFakeTimers();
    pool = new FakePool();
    changes = [];
    health = new ServerHealth({
      pool,
      logger: silentLogger,
      pingIntervalMs: 1000,
      reconnectBaseMs: 100,
      reconnectMaxMs: 400,
      random: () => 0.999999,
    });
    health.onChange((server, available) => changes.push([server, available]));
  });
  afterEach(async () => {
    await health.close();
    vi.useRealTimers();
  });

  // The always-on server 'kept' connects, then crashes while it cannot start again.
  async function crashKeptServer(): Promise<void> {
    pool.add('kept', { always_on: true });
    health.start();
    await vi.advanceTimersByTimeAsync(0);
    pool.up = false;
    pool.crash('kept');
    expect(health.isAvailable('kept')).toBe(false);
  }

  it('connects always-on servers in the background and leaves lazy ones alone', async () => {
    pool.add('kept', { always_on: true });
    pool.add('lazy', {});
    health.start();
    expect(pool.starts).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.starts).toEqual(['kept']);
    expect(changes).toEqual([]);
  });

  it('marks a crashed always-on server unavailable once, then available once after a backoff reconnect', async () => {
    await crashKeptServer();
    await vi.advanceTimersByTimeAsync(100 + 200 + 400 + 400);
    expect(pool.starts).toEqual(['kept', 'kept', 'kept', 'kept', 'kept']);
    expect(changes).toEqual([['kept', false]]);
    pool.up = true;
    await vi.advanceTimersByTimeAsync(400);
    expect(health.isAvailable('kept')).toBe(true);
    expect(changes).toEqual([
      ['kept', false],
      ['kept', true],
    ]);
  });

  it('never marks a lazy server unavailable, even when it crashes or stops answering pings', async () => {
    pool.add('lazy', {});
    health.start();
    await pool.connection('lazy');
    pool.pingOk = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(pool.discarded).toEqual(['lazy']);
    expect(health.isAvailable('lazy')).toBe(true);
    expect(changes).toEqual([]);
    expect(pool.starts).toEqual(['lazy']);
  });

  it('discards an always-on server that does not answer a ping and reconnects it', async () => {
    pool.add('kept', { always_on: true });
    health.start();
    await vi.advanceTimersByTimeAsync(0);
    pool.pingOk = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(pool.discarded).toEqual(['kept']);
    expect(health.isAvailable('kept')).toBe(false);
    pool.pingOk = true;
    await vi.advanceTimersByTimeAsync(100);
    expect(health.isAvailable('kept')).toBe(true);
    expect(pool.starts).toEqual(['kept', 'kept']);
  });

  it('follows a servers.yaml change: connects a new always-on server, forgets one that became lazy', async () => {
    await crashKeptServer();

    pool.up = true;
    pool.reconfigure({ kept: {}, added: { always_on: true } });
    expect(health.isAvailable('kept')).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pool.starts).toEqual(['kept', 'added']);
    expect(changes).toEqual([
      ['kept', false],
      ['kept', true],
    ]);
  });

  it('stops reconnecting after close', async () => {
    pool.add('kept', { always_on: true });
    health.start();
    await vi.advanceTimersByTimeAsync(0);
    pool.crash('kept');
    await health.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pool.starts).toEqual(['kept']);
  });
});
