// Logs to stderr, in one format per run: by default one readable line per event for a human
// (`loadout: warn [downstream echo] server failed to start (err: …)`), or with `json` structured
// JSON lines through pino for machines. stdout belongs to the MCP protocol in stdio mode, and
// pino's default destination is stdout, so the destination is named explicitly. pino is loaded
// on the first line that passes the level: at the default level a warm start writes none, and
// loading pino and building its logger cost ~5 % of a warm start (~48 M instructions).
import { createRequire } from 'node:module';
import type { Logger as PinoLogger } from 'pino';

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Formats accepted by `--log-format`: a readable line per event, or JSON lines. */
export const LOG_FORMATS = ['human', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

// pino's numeric level values.
const LEVEL_VALUES: Record<LogLevel, number> = { fatal: 60, error: 50, warn: 40, info: 30, debug: 20, trace: 10, silent: Infinity };

type LogFn = (objectOrMessage: object | string, message?: string) => void;

/** What loadout logs through: the part of pino's logger it uses (a pino logger is one). */
export interface Logger {
  readonly level: string;
  child(bindings: Record<string, unknown>, options?: { level?: LogLevel }): Logger;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
}

/** The root logger, writing to file descriptor 2: readable lines, or JSON lines with `json`. */
export function createLogger(level: LogLevel = 'info', format: LogFormat = 'human'): Logger {
  if (format === 'human') return humanLogger(level, {});
  let root: PinoLogger | undefined;
  return lazyLogger(level, () => {
    const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
    root ??= pino({ name: 'loadout', level }, pino.destination({ dest: 2, sync: false }));
    return root;
  });
}

/** A logger that drops everything: the default for library use and unit tests. */
export const silentLogger: Logger = createLogger('silent');

// A logger whose pino logger (`resolve`) is built on its first line at or above `level`.
function lazyLogger(level: LogLevel, resolve: () => PinoLogger): Logger {
  const threshold = LEVEL_VALUES[level];
  let target: PinoLogger | undefined;
  const pinoLogger = (): PinoLogger => (target ??= resolve());
  const at =
    (method: Exclude<LogLevel, 'fatal' | 'trace' | 'silent'>): LogFn =>
    (objectOrMessage, message) => {
      if (LEVEL_VALUES[method] < threshold) return;
      if (message === undefined) pinoLogger()[method](objectOrMessage);
      else pinoLogger()[method](objectOrMessage, message);
    };
  return {
    level,
    child: (bindings, options = {}) => lazyLogger(options.level ?? level, () => pinoLogger().child(bindings, options)),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
  };
}

type WrittenLevel = Exclude<LogLevel, 'fatal' | 'trace' | 'silent'>;

// One line per event: level, where (component and server), message, then the other fields.
function humanLogger(level: LogLevel, bindings: Record<string, unknown>): Logger {
  const threshold = LEVEL_VALUES[level];
  const at =
    (method: WrittenLevel): LogFn =>
    (objectOrMessage, message) => {
      if (LEVEL_VALUES[method] < threshold) return;
      const fields = typeof objectOrMessage === 'string' ? bindings : { ...bindings, ...objectOrMessage };
      const text = typeof objectOrMessage === 'string' ? objectOrMessage : (message ?? '');
      process.stderr.write(`${humanLine(method, fields, text)}\n`);
    };
  return {
    level,
    child: (childBindings, options = {}) => humanLogger(options.level ?? level, { ...bindings, ...childBindings }),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
  };
}

/** `loadout: warn [downstream echo] server failed to start (err: spawn x ENOENT)`, on one line. */
export function humanLine(level: WrittenLevel, fields: Record<string, unknown>, message: string): string {
  const { mod, server, ...rest } = fields;
  const where = [mod, server]
    .filter((part) => part !== undefined)
    .map(String)
    .join(' ');
  const details = Object.entries(rest)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${fieldText(value)}`);
  return `loadout: ${level}${where ? ` [${where}]` : ''} ${oneLine(message)}${details.length ? ` (${details.join(', ')})` : ''}`;
}

function fieldText(value: unknown): string {
  if (value instanceof Error) return oneLine(value.message);
  return oneLine(typeof value === 'string' ? value : JSON.stringify(value));
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
}
