// gateway: the MCP server clients talk to — sessions, meta-tools, forwarding, transports.
export { createGateway, type Gateway } from './createGateway.js';
export { TOOLSET_META_TOOLS, namingOptions } from './metaTools/index.js';
export { serveHttp } from './serveHttpOnDemand.js';
export type { HttpGateway } from './http/index.js';
export { DrainingTransport, GatewayStdioTransport } from './stdio/index.js';
export { Drain, cutOffCalls } from './drain.js';
