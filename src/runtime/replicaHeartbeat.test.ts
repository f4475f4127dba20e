// The heartbeat's timing on fake timers: a beat at start, one per interval with the readings of the
// moment, a failed beat that does not stop the next, nothing after close but the row removed.
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../shared/index.js';
import type { ReplicaHeartbeat, ReplicaTable } from '../store/index.js';
import { REPLICA_HEARTBEAT_MS, ReplicaHeartbeats } from './replicaHeartbeat.js';

// A table that records what it is asked, and fails the beats `failing` says.
function recordingTable(failing: (beat: number) => boolean = () => false) {
  const beats: ReplicaHeartbeat[] = [];
  const forgotten: string[] = [];
  const table: ReplicaTable = {
    beat(heartbeat) {
      beats.push(heartbeat);
      return failing(beats.length) ? Promise.reject(new Error('store down')) : Promise.resolve();
    },
    heard: () => Promise.resolve([]),
    forget(id) {
      forgotten.push(id);
      return Promise.resolve();
    },
  };
  return { table, beats, forgotten };
}

describe('ReplicaHeartbeats', () => {
  it('beats at start and every 10 s with the readings of the moment, through a failed beat, and forgets its row at close', async () => {
    vi.useFakeTimers();
    try {
      const { table, beats, forgotten } = recordingTable((beat) => beat === 2);
      let sessions = 0;
      const heartbeats = new ReplicaHeartbeats('r1', table, { sessions: () => sessions, listening: () => true }, { logger: silentLogger });
      await heartbeats.start();
      expect(beats).toHaveLength(1);
      expect(beats[0]).toMatchObject({ id: 'r1', pid: process.pid, sessions: 0, listening: true });
      sessions = 2;
      await vi.advanceTimersByTimeAsync(REPLICA_HEARTBEAT_MS);
      // The second beat fails (logged); the third goes on.
      await vi.advanceTimersByTimeAsync(REPLICA_HEARTBEAT_MS);
      expect(beats.map((beat) => beat.sessions)).toEqual([0, 2, 2]);
      expect(new Set(beats.map((beat) => beat.started)).size).toBe(1);
      await heartbeats.close();
      await vi.advanceTimersByTimeAsync(3 * REPLICA_HEARTBEAT_MS);
      expect(beats).toHaveLength(3);
      expect(forgotten).toEqual(['r1']);
    } finally {
      vi.useRealTimers();
    }
  });
});
