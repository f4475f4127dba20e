// Cross-cutting primitives every layer may use: the error type, the stderr logger, call cancellation, the lazily loaded YAML module and JSON Schema validator, JSON-RPC line framing, the Transport decorator shape.
export { LoadoutError, isLoadoutError, errorMessage, type LoadoutErrorCode } from './errors.js';
export { Cancellation } from './cancellation.js';
export { JsonLineReader, JsonLineWriter, type JsonLineHandlers } from './jsonLines.js';
export { KeyedTimers } from './keyedTimers.js';
export { TransportDecorator } from './transportDecorator.js';
export { createLogger, silentLogger, LOG_LEVELS, type Logger, type LogLevel } from './logger.js';
export { yamlModule } from './lazyYaml.js';
export { lazySchemaValidator } from './lazySchemaValidator.js';
