// Everything the CLI prints for humans and scripts: tables, JSON, notes, progress and the one-line
// error. The only module that writes to stdout/stderr directly; colour only when writing to a TTY.
import { createRequire } from 'node:module';
import type TableConstructor from 'cli-table3';
import { isLoadoutError, issueText, remedyText, type LogFormat, type LoadoutRemedy } from '../shared/index.js';

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
    chars: plain
      ? {
          top: '',
          'top-mid': '',
          'top-left': '',
          'top-right': '',
          bottom: '',
          'bottom-mid': '',
          'bottom-left': '',
          'bottom-right': '',
          left: '',
          'left-mid': '',
          mid: '',
          'mid-mid': '',
          right: '',
          'right-mid': '',
          middle: '  ',
        }
      : {},
  });
  table.push(...rows);
  process.stdout.write(`${plain ? table.toString().replace(/^ | +$/gm, '') : table.toString()}\n`);
}

/** Exit 0 without a word when stdout's reader goes away (EPIPE); other stdout errors still fail. */
export function exitQuietlyOnEpipe(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    printError(`cannot write to stdout: ${error.message}`);
    process.exit(1);
  });
}

/** Print a value as pretty JSON to stdout (for `--json`). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Print lines of human text to stdout. */
export function printLines(...lines: string[]): void {
  // No lines print nothing (not an empty line): callers pass lists that are often empty.
  if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
}

// stderr's format for this run (--log-format): notes and the final error match the log lines.
let stderrFormat: LogFormat = 'human';

/** Write notes and errors on stderr as JSON lines (`json`) or readable lines (`human`, the default). */
export function useStderrFormat(format: LogFormat): void {
  stderrFormat = format;
}

// One stderr line: `loadout: text`, or a JSON line shaped like the logger's (pino's level numbers).
function writeStderr(level: 'info' | 'error', text: string): void {
  if (stderrFormat === 'json')
    process.stderr.write(`${JSON.stringify({ level: level === 'error' ? 50 : 30, time: Date.now(), name: 'loadout', msg: text })}\n`);
  else process.stderr.write(`loadout: ${text}\n`);
}

/** A note for the human on stderr (stdout may be the MCP protocol or a pipe). */
export function printNote(text: string): void {
  writeStderr('info', text);
}

// How much of a failure message is printed: a backend's whole answer can be megabytes.
const MAX_ERROR_LINES = 30;
const MAX_ERROR_LINE_CHARS = 400;

/**
 * The error every failing command ends with: `loadout: ` and the whole message (a multi-line one,
 * like a YAML snippet to paste, keeps its lines), with long lines and long bodies cut and marked.
 */
export function printError(message: string): void {
  writeStderr('error', errorText(message));
}

/** `message` cut to at most MAX_ERROR_LINES lines of MAX_ERROR_LINE_CHARS, each cut marked. */
export function errorText(message: string): string {
  const lines = message.trimEnd().split('\n');
  const shown = lines
    .slice(0, MAX_ERROR_LINES)
    .map((line) =>
      line.length > MAX_ERROR_LINE_CHARS
        ? `${line.slice(0, MAX_ERROR_LINE_CHARS)}… [${line.length - MAX_ERROR_LINE_CHARS} more characters cut]`
        : line,
    );
  if (lines.length > MAX_ERROR_LINES) shown.push(`… [${lines.length - MAX_ERROR_LINES} more lines cut]`);
  return shown.join('\n');
}

// Next steps the lower layers ask for, in the CLI's terms: its own commands.
const CLI_REMEDIES: Readonly<Record<LoadoutRemedy, string>> = {
  'create-toolset': 'create one with "loadout toolset create NAME server.tool …"',
};

/** The message of a failure for printError: a schema error as its issues, not its JSON dump. */
export function failureMessage(error: unknown): string {
  const issues = (error as { issues?: unknown }).issues;
  if (error instanceof Error && error.name === 'ZodError' && Array.isArray(issues)) {
    return (issues as Array<{ message: string; path: PropertyKey[] }>).map(issueText).join('\n');
  }
  if (isLoadoutError(error)) return remedyText(error, CLI_REMEDIES);
  return error instanceof Error ? error.message : String(error);
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
