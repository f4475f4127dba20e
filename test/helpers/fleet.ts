// The frame every test of several replicas shares: before each test, fresh temp dirs with
// servers.yaml written; after it, its clients closed, then the balancer, then the replicas, then
// the dirs, so nothing of one test outlives it.
import type { Client } from '@modelcontextprotocol/client';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach } from 'vitest';
import { startBalancer, type Balancer, type BalancerOptions } from './balancer.js';
import { makeTempDirs, writeServersYaml, type TempDirs } from './gateway.js';

/** One test's replicas and what it opened on them. */
export interface Fleet<R> {
  /** This test's dirs (servers.yaml in `dirs.configDir`). */
  readonly dirs: TempDirs;
  /** servers.yaml as written, to show it was never written again. */
  readonly serversYaml: string;
  readonly replicas: readonly R[];
  /** Clients to close after the test. */
  readonly clients: Client[];
  /** Start the replicas (at once) and a round-robin balancer over each one's /mcp URL. */
  start(replicas: Array<Promise<R>>, urlOf: (replica: R) => string, options?: BalancerOptions): Promise<Balancer>;
  /** Put `replica` (one started again) in place `index`: the balancer sends that place's requests to it, and it is closed after the test. */
  replace(index: number, replica: R): void;
}

/** A Fleet per test of the calling `describe`, its servers.yaml naming `servers` (and the top-level keys of `extra`). */
export function useFleet<R extends { close(): Promise<unknown> }>(
  servers: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Fleet<R> {
  let dirs: TempDirs | undefined;
  let serversYaml = '';
  let replicas: R[] = [];
  const replaced: R[] = [];
  let balancer: Balancer | undefined;
  let urlOfReplica: ((replica: R) => string) | undefined;
  const clients: Client[] = [];

  beforeEach(async () => {
    dirs = await makeTempDirs();
    serversYaml = await readFile(await writeServersYaml(dirs.configDir, servers, extra), 'utf8');
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    await balancer?.close();
    balancer = undefined;
    await Promise.allSettled([...replicas, ...replaced.splice(0)].map((replica) => replica.close()));
    replicas = [];
    await dirs?.cleanup();
  });

  return {
    get dirs() {
      return dirs!;
    },
    get serversYaml() {
      return serversYaml;
    },
    get replicas() {
      return replicas;
    },
    clients,
    async start(starting, urlOf, options) {
      // Whatever starts is closed after the test, even when another of them failed to.
      const settled = await Promise.allSettled(starting);
      replicas = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const failed = settled.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      urlOfReplica = urlOf;
      balancer = await startBalancer(replicas.map(urlOf), options);
      return balancer;
    },
    replace(index, replica) {
      // The one it replaces is still closed after the test (a no-op once it has exited).
      replaced.push(replicas[index]!);
      replicas[index] = replica;
      balancer!.replace(index, urlOfReplica!(replica));
    },
  };
}
