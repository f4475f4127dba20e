// gateway: the MCP server clients talk to — sessions, meta-tools, forwarding, transports.
export { createGateway, type Gateway, type GatewayOptions } from './createGateway.js';
export { openRuntime, type Runtime } from './runtime.js';
export { GatewaySession, SERVER_INFO } from './session.js';
export { META_TOOLS, TOOLSET_META_TOOLS, namingOptions, type MetaTool } from './metaTools/index.js';
export type { GatewayContext } from './context.js';
export { serveHttp, type HttpGateway, type HttpServeOptions } from './httpServer.js';
export { GatewayStdioTransport } from './stdioTransport.js';
export { assertSafeBind, isLoopbackHost } from './httpGuard.js';
export { readRunningGateways, type GatewayRuntime } from './runtimeFile.js';
