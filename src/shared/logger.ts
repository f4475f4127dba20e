// Structured logs to stderr through pino. stdout belongs to the MCP protocol in stdio mode, and
// pino's default destination is stdout, so the destination is named explicitly. pino is loaded
// on the first line that passes the level: at the default level a warm start writes none, and
// loading pino and building its logger cost ~5 % of a warm start (~48 M instructions).
import { createRequire } from 'node:module';
import type { Logger as PinoLogger } from 'pino';

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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

/** The root logger, writing JSON lines to file descriptor 2. */
export function createLogger(level: LogLevel = 'info'): Logger {
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
