// Cross-cutting primitives every layer may use: the error type, the stderr logger, call cancellation, timers by key and with backoff, bounded waits, waits a signal cuts short and work awaited before a close, the lazily loaded YAML module and JSON Schema validator, JSON-RPC line framing and the nesting limit of JSON from a peer, canonical JSON without recursion, the Transport decorator shape, the protocol eras and how a message tells them apart, SEP-2243's `Mcp-Param-*` headers, a map bounded to its recently used entries.
export {
  LoadoutError,
  isLoadoutError,
  errorMessage,
  remedyText,
  failureOf,
  FailureSchema,
  type Failure,
  type LoadoutErrorCode,
  type LoadoutRemedy,
} from './errors.js';
export { Cancellation } from './cancellation.js';
export { JsonLineReader, JsonLineWriter, methodOfLine, requestIdOfLine, type RefusedLine } from './jsonLines.js';
export { MAX_JSON_DEPTH, nestedDeeperThan } from './jsonDepth.js';
export { canonicalJson } from './canonicalJson.js';
export { KeyedTimers, MAX_TIMER_MS } from './keyedTimers.js';
export { BackoffTimers, backoffDelayMs } from './backoffTimers.js';
export { TransportDecorator } from './transportDecorator.js';
export { createLogger, silentLogger, LOG_LEVELS, LOG_FORMATS, type Logger, type LogLevel, type LogFormat } from './logger.js';
export { yamlModule } from './lazyYaml.js';
export { oneLine } from './text.js';
export { settleWithin } from './settleWithin.js';
export { WorkInFlight } from './workInFlight.js';
export { RecentlyUsed } from './recentlyUsed.js';
export { untilAborted } from './untilAborted.js';
export { firstIssue, firstIssueText, issueText } from './zodIssue.js';
export { LOADOUT_VERSION } from './version.js';
export {
  HEADER_MISMATCH,
  paramHeaderMismatch,
  paramHeadersOf,
  scanParamHeaders,
  type ParamHeader,
  type ParamHeaderScan,
} from './paramHeaders.js';
export { lazySchemaValidator } from './lazySchemaValidator.js';
export {
  MODERN_REVISION,
  carriesEnvelope,
  eraOfVersion,
  isKnownProtocolVersion,
  modernCallResult,
  opensLegacyEra,
  type ProtocolEra,
} from './protocolEras.js';
