// Everything the CLI prints for humans and scripts: tables, JSON, notes, progress and the one-line
// error. The only module that writes to stdout/stderr directly; colour only when writing to a TTY.
import { createRequire } from 'node:module';
import type TableConstructor from 'cli-table3';

// Loaded on first use: `serve` prints no tables and should not pay for loading cli-table3 at start.
let TableClass: typeof TableConstructor | undefined;
/** The cli-table3 constructor, loaded on first use. */
export function tableClass(): typeof TableConstructor {
  TableClass ??= createRequire(import.meta.url)('cli-table3') as typeof TableConstructor;
  return TableClass;
}

const ANSI = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;
type Colour = keyof typeof ANSI;

function useColour(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR;
}

/** Wrap `text` in a colour when stdout is a terminal. */
export function paint(colour: Colour, text: string): string {
  return useColour(process.stdout) ? `\u001b[${ANSI[colour]}m${text}\u001b[0m` : text;
}

/** Print an aligned table to stdout. */
export function printTable(head: string[], rows: string[][]): void {
  const plain = !useColour(process.stdout);
  const Table = tableClass();
  const table = new Table({
    head: head.map((title) => paint('bold', title)),
    style: { head: [], border: plain ? [] : ['grey'], compact: true },
    chars: plain ? { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' } : {},
  });
  table.push(...rows);
  process.stdout.write(`${plain ? table.toString().replace(/^ | +$/gm, '') : table.toString()}\n`);
}

/** Print a value as pretty JSON to stdout (for `--json`). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Print lines of human text to stdout. */
export function printLines(...lines: string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A note for the human on stderr (stdout may be the MCP protocol or a pipe). */
export function printNote(text: string): void {
  process.stderr.write(`loadout: ${text}\n`);
}

/** The one-line error every failing command ends with. */
export function printError(message: string): void {
  process.stderr.write(`loadout: ${message.split('\n')[0]}\n`);
}

/** How far a multi-step job is, and what it is doing now. */
interface ProgressStep {
  done: number;
  total: number;
  message: string;
}

const BAR_WIDTH = 24;

/** A progress bar redrawn on one line of `stream` (stderr) when it is a terminal; silent otherwise. */
export function progressBar(stream: NodeJS.WriteStream): { update(step: ProgressStep): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  return {
    update({ done, total, message }) {
      const filled = total ? Math.round((done / total) * BAR_WIDTH) : 0;
      stream.write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${message}\x1b[K`);
    },
    done() {
      stream.write('\r\x1b[K');
    },
  };
}
