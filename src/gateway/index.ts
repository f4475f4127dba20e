// gateway: the MCP server clients talk to — sessions, meta-tools, forwarding, transports.
export { createGateway, type Gateway } from './createGateway.js';
export { openRuntime, type Runtime } from './runtime.js';
export { TOOLSET_META_TOOLS, namingOptions } from './metaTools/index.js';
export { serveHttp, type HttpGateway } from './httpServer.js';
export { GatewayStdioTransport } from './stdioTransport.js';
export { assertSafeBind } from './httpGuard.js';
export { readRunningGateways } from './runtimeFile.js';
export {
  discoveryRecordsFile,
  readDiscoveryRecords,
  recordDiscoveryOutcomes,
  type DiscoveryOutcome,
  type DiscoveryRecord,
} from './discoveryRecords.js';
export { failedText, retryText } from './discoveryText.js';
