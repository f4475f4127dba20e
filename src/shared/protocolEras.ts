// The protocol eras loadout speaks on both sides, and how a message or a negotiated version tells
// them apart: 2025 (a session opened by initialize, requests that carry nothing of their own) and
// 2026-07-28 (stateless: every request carries the `_meta` envelope naming its revision, and the
// client's info and capabilities). The gateway's ways in and the downstream connections ask here,
// as the SDK's own protocolEras.ts does, rather than each comparing versions and keys itself.
import {
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Implementation,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';

/** Whether `version` is a protocol revision loadout speaks (a client may send any string). */
export function isKnownProtocolVersion(version: string): boolean {
  return version === MODERN_REVISION || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

/** The protocol era of a connection or a request: 2026-07-28 and later (stateless), or 2025 (initialize). */
export type ProtocolEra = 'modern' | 'legacy';

/**
 * The modern revision loadout answers plain calls of in front of the SDK (modernHttp.ts); a request
 * naming another goes to the SDK, which knows every revision it serves.
 */
export const MODERN_REVISION = '2026-07-28';

/**
 * The era of a connection by the version the SDK negotiated with its client: the versions
 * initialize negotiates are the 2025 era's (the SDK lists only those), any other a modern entry
 * pinned. Undefined before anything was negotiated.
 */
export function eraOfVersion(version: string | undefined): ProtocolEra | undefined {
  if (version === undefined) return undefined;
  return SUPPORTED_PROTOCOL_VERSIONS.includes(version) ? 'legacy' : 'modern';
}

/** Whether a client's first message opens the 2025 era (an initialize request); anything else opens 2026-07-28's. */
export function opensLegacyEra(message: JSONRPCMessage): boolean {
  return 'method' in message && 'id' in message && message.method === 'initialize';
}

/** Whether request params claim the 2026-07-28 era the way its requests do: the protocol version in `_meta`. */
export function carriesEnvelope(params: unknown): params is { _meta: Record<string, unknown> } & Record<string, unknown> {
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * A tools/call result as the SDK Server encodes it for 2026-07-28 (its encodeResult): it says
 * whether it is complete, and its _meta names the server `serverInfo`, unless it names one already.
 */
export function modernCallResult(result: Record<string, unknown>, serverInfo: Implementation): Record<string, unknown> {
  const meta = result._meta;
  const plainMeta = typeof meta === 'object' && meta !== null && !Array.isArray(meta);
  const named = meta !== undefined && (!plainMeta || (meta as Record<string, unknown>)[SERVER_INFO_META_KEY] !== undefined);
  if (result.resultType !== undefined && named) return result;
  // One copy, whatever it adds, in the order the SDK's encoding gives: resultType, then _meta.
  return {
    ...result,
    ...(result.resultType === undefined && { resultType: 'complete' }),
    ...(!named && { _meta: { ...(meta as Record<string, unknown> | undefined), [SERVER_INFO_META_KEY]: serverInfo } }),
  };
}
