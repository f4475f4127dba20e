// Words for a server's discovery state, the same for the agent (discover-all-tools, an unknown
// tool's error) and for `loadout status`: when it failed, why, and when it is tried again.
import type { DiscoveryState } from './backgroundDiscovery.js';
import type { DiscoveryRecord } from './discoveryRecords.js';

/** What the words about a failed discovery use of its record. */
type AttemptTimes = Pick<DiscoveryRecord, 'failedAt' | 'failures' | 'retryAt'>;

/** A time of day as HH:MM:SS (24 h, local time). */
export function clockTime(time: number | string): string {
  return new Date(time).toLocaleTimeString('en-GB', { hour12: false });
}

/** A wait in words: "now", "in 40 s", "in 4 min", "in 1 h 5 min". */
export function waitText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `in ${minutes} min` : `in ${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

/** "failed at 15:02:11 (2 attempts in a row)": when and how often a server's discovery failed. */
export function failedText(record: AttemptTimes): string {
  return `failed at ${clockTime(record.failedAt)} (${record.failures} attempt${record.failures === 1 ? '' : 's'} in a row)`;
}

/** "failed at 15:02:11 (1 attempt in a row), next try in 28 s". */
export function retryText(record: AttemptTimes, now = Date.now()): string {
  return `${failedText(record)}, next try ${waitText(Date.parse(record.retryAt) - now)}`;
}

/** One line (then the failure's own lines, e.g. the server's stderr) for the agent. */
export function discoveryStateText(state: DiscoveryState, now = Date.now()): string {
  if (state.state === 'pending') {
    const retry = state.previous ? ` (tried again after it ${failedText(state.previous)})` : '';
    return `${state.server}: discovery pending since ${clockTime(state.since)}${retry}; its tools join the catalog when it answers.`;
  }
  return `${state.server}: not discovered: ${retryText(state.record, now)}. ${state.record.failure.text}`;
}
