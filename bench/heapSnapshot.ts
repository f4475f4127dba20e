// Live JS heap of a spawned gateway after a full garbage collection, read from a V8 heap snapshot
// the process writes on SIGUSR2 (node's --heapsnapshot-signal): unlike RSS, which floats by tens
// of MiB with V8's heap sizing and GC timing, this only grows when something is retained.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SIGNAL = 'SIGUSR2';
const POLL_MS = 100;
const SNAPSHOT_WAIT_MS = 60_000;

/** A directory the gateway writes heap snapshots to, with the node flags that make it do so. */
export interface HeapSnapshotter {
  /** Node flags for the spawned process. */
  nodeFlags: string[];
  /**
   * Bytes of the process's live heap (self sizes of all snapshot nodes, collected first).
   * `settle` runs after the snapshot has begun (the process writes it on its main thread, so a
   * request it answers afterwards shows the file complete).
   */
  liveHeapBytes(pid: number, settle: () => Promise<unknown>): Promise<number>;
  /** Remove the directory and its snapshots. */
  cleanup(): Promise<void>;
}

/** Make a snapshot directory in the OS temp dir. */
export async function createHeapSnapshotter(): Promise<HeapSnapshotter> {
  const dir = await mkdtemp(path.join(tmpdir(), 'loadout-bench-heap-'));
  return {
    nodeFlags: [`--heapsnapshot-signal=${SIGNAL}`, `--diagnostic-dir=${dir}`],
    async liveHeapBytes(pid, settle) {
      const before = new Set(await readdir(dir));
      process.kill(pid, SIGNAL);
      const file = await newSnapshotFile(dir, before);
      await settle();
      const text = await readFile(path.join(dir, file), 'utf8');
      await rm(path.join(dir, file));
      return liveBytesOf(text);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

async function newSnapshotFile(dir: string, before: Set<string>): Promise<string> {
  for (let waitedMs = 0; waitedMs < SNAPSHOT_WAIT_MS; waitedMs += POLL_MS) {
    const file = (await readdir(dir)).find((name) => !before.has(name) && name.endsWith('.heapsnapshot'));
    if (file) return file;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`no heap snapshot appeared in ${dir} within ${SNAPSHOT_WAIT_MS / 1000} s`);
}

/** Sum of the self sizes of a heap snapshot's nodes (the snapshot format's flat `nodes` array). */
export function liveBytesOf(snapshotJson: string): number {
  const snapshot = JSON.parse(snapshotJson) as { snapshot: { meta: { node_fields: string[] } }; nodes: number[] };
  const fields = snapshot.snapshot.meta.node_fields;
  const selfSize = fields.indexOf('self_size');
  let total = 0;
  for (let index = selfSize; index < snapshot.nodes.length; index += fields.length) total += snapshot.nodes[index]!;
  return total;
}

/**
 * A GET on a connection of its own, to settle a snapshot of an HTTP process: the snapshot stalls the
 * process for seconds, past its keep-alive timeout, and a request sent meanwhile on a pooled idle
 * connection is reset when that timeout fires before the request is read.
 */
export function freshRequest(url: URL): Promise<void> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => response.resume().once('end', resolve)).once('error', reject);
  });
}
