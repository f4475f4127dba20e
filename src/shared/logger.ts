// Structured logs to stderr. stdout belongs to the MCP protocol in stdio mode, and pino's
// default destination is stdout, so the destination is named explicitly.
import { pino, type Logger } from 'pino';

export type { Logger };

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The root logger, writing JSON lines to file descriptor 2. */
export function createLogger(level: LogLevel = 'info'): Logger {
  return pino({ name: 'loadout', level }, pino.destination({ dest: 2, sync: false }));
}

/** A logger that drops everything: the default for library use and unit tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
