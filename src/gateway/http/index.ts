// The HTTP wing's door (`serve --http`): the gateway's index takes its types, and
// serveHttpOnDemand.ts loads it with an `await import`, so a stdio start never parses it.
export { serveHttp, type HttpGateway, type HttpServeOptions } from './httpServer.js';
