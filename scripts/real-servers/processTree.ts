// The processes a child started, so that none outlives the check: a server may start helpers of
// its own (a browser, a shell) that ending the server alone would leave behind. Linux only (/proc);
// elsewhere there is nothing to read and only the direct child is ended, by the SDK.
import { readdirSync, readFileSync } from 'node:fs';

/** A process, with its start time so a reused pid is never signalled. */
export interface ProcessRef {
  pid: number;
  startTime: string;
}

/** Every live descendant of `pid`, the child itself included. */
export function processTree(pid: number): ProcessRef[] {
  const table = readProcessTable();
  const tree: ProcessRef[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    const self = table.get(parent);
    if (self) tree.push({ pid: parent, startTime: self.startTime });
    for (const [child, entry] of table) if (entry.ppid === parent) queue.push(child);
  }
  return tree;
}

/** Those of `processes` still running (same pid, same start time). */
export function stillRunning(processes: readonly ProcessRef[]): ProcessRef[] {
  const table = readProcessTable();
  return processes.filter(({ pid, startTime }) => table.get(pid)?.startTime === startTime);
}

/** SIGKILL each of `processes` still running; returns how many. */
export function killSurvivors(processes: readonly ProcessRef[]): number {
  let killed = 0;
  for (const { pid } of stillRunning(processes)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // Gone in the meantime.
    }
  }
  return killed;
}

function readProcessTable(): Map<number, { ppid: number; startTime: string }> {
  const table = new Map<number, { ppid: number; startTime: string }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] is the state, [1] the parent pid, [19] the start time (fields 3, 4 and 22 of stat(5)).
      if (fields[0] === 'Z') continue;
      table.set(Number(entry), { ppid: Number(fields[1]), startTime: fields[19] ?? '' });
    } catch {
      // Exited while being read.
    }
  }
  return table;
}
