// Cross-cutting primitives every layer may use: the error type and the stderr logger.
export { LoadoutError, isLoadoutError, errorMessage, type LoadoutErrorCode } from './errors.js';
export { createLogger, silentLogger, LOG_LEVELS, type Logger, type LogLevel } from './logger.js';
