// The stdio wing's door: the transport, the first message that picks the era, the 2026-07-28 listen
// streams and call path, and the drain of a stdio serve.
export { GatewayStdioTransport } from './stdioTransport.js';
export { DrainingTransport } from './stdioDrain.js';
export { ListenSubscriptions, ListenedResources, type ResourceUpdates } from './listenSubscriptions.js';
export { ModernCallPath } from './modernCallPath.js';
export { StdioOpening } from './stdioOpening.js';
