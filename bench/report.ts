// The bench's output: one row per figure with loadout's measurement, the physical limit it is
// compared with (measured in the same run), their ratio, the target (docs/performance.md) and pass/fail;
// printed as a table or as JSON.
import Table from 'cli-table3';
import os from 'node:os';

/** One line of the result table. */
export interface BenchRow {
  /** The row's number (its section) and a letter, e.g. `1a`. */
  id: string;
  figure: string;
  /** loadout's figure, formatted. */
  loadout: string;
  /** What it is compared with, formatted and named. */
  limit: string;
  /** loadout ÷ limit, when that comparison is meaningful. */
  ratio?: number;
  target: string;
  /** Undefined for figures without a target. */
  pass?: boolean;
  /** The raw numbers (milliseconds, bytes, counts) for --json. */
  values: Record<string, number>;
}

/** Where the run happened. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  loadAverage: number[];
}

/** The machine this process runs on. */
export function machineInfo(): MachineInfo {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

/** The rows as a text table (with the machine and total time underneath). */
export function formatTable(rows: readonly BenchRow[], machine: MachineInfo, elapsedMs: number): string {
  const table = new Table({
    head: ['#', 'figure', 'loadout', 'limit (same run)', 'ratio', 'target', 'ok'],
    style: { head: [], border: [] },
    wordWrap: true,
    colWidths: [5, 34, 24, 30, 8, 20, 6],
  });
  for (const row of rows) {
    table.push([
      row.id,
      row.figure,
      row.loadout,
      row.limit,
      row.ratio === undefined ? '' : formatRatio(row.ratio),
      row.target,
      passText(row.pass),
    ]);
  }
  const passed = rows.filter((row) => row.pass === true).length;
  const failed = rows.filter((row) => row.pass === false).length;
  return [
    table.toString(),
    `${passed} targets met, ${failed} missed. Tokens are estimated as bytes / 4.`,
    `${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, ${machine.platform}, load ${machine.loadAverage.join(' ')}; ${Math.round(elapsedMs / 1000)} s.`,
  ].join('\n');
}

/** The rows as JSON. */
export function formatJson(rows: readonly BenchRow[], machine: MachineInfo, elapsedMs: number, quick: boolean): string {
  return JSON.stringify({ machine, quick, elapsedMs: Math.round(elapsedMs), rows }, null, 2);
}

function passText(pass: boolean | undefined): string {
  if (pass === undefined) return '';
  return pass ? 'pass' : 'FAIL';
}

function formatRatio(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value >= 10 ? Math.round(value) : value.toFixed(2)}×`;
}
