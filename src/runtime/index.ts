// runtime: what runs a gateway's life below its protocol — the runtime build (config → pool →
// catalog), background discovery and its records, config sync, tool-list watching, the runtime file.
export { openRuntime, type Runtime } from './runtime.js';
export { BackgroundDiscovery, type DiscoveryState } from './backgroundDiscovery.js';
export { startConfigSync } from './configSync.js';
export {
  readDiscoveryRecords,
  recordDiscoveryOutcomes,
  type DiscoveryOutcome,
  type DiscoveryRecord,
  type DiscoveryRecordsPlace,
} from './discoveryRecords.js';
export { discoveryRecordsOf, storedDiscoveryRecords } from './storedDiscoveryRecords.js';
export { discoveryStateText, failedText, retryText } from './discoveryText.js';
export { readRunningGateways } from './runtimeFile.js';
export { watchToolListChanges } from './toolListWatch.js';
export { ReplicaHeartbeats, REPLICA_HEARTBEAT_MS, REPLICA_SILENT_MS, type ReplicaReadings } from './replicaHeartbeat.js';
