// Traces and metrics in the OpenTelemetry MCP conventions: the hooks the gateway and downstream
// layers call (no-ops while telemetry is off), and its start. The SDK itself loads only in start.ts.
export {
  TELEMETRY_OFF,
  type Telemetry,
  type ExportChoice,
  type ServerWire,
  type HiddenFromCaller,
  type DownstreamPeer,
  type ServedRequest,
  type SearchFacts,
  type StoreOperationFacts,
  type GaugeReading,
  type GatewayGauges,
  type MetaToolNotes,
  type RequestTrace,
  type TracedSendOptions,
} from './telemetry.js';
export { startTelemetry, exportChoice, type TelemetryRequest } from './start.js';
export { LOADOUT_ATTR } from './names.js';
