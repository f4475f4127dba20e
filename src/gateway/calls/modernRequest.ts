// What a 2026-07-28 request carries that a 2025 one does not, read where the request comes in
// (the session's intake from the raw params, the SDK Server from the context it lifted them into):
// the client's capabilities and log level from its `_meta` envelope, and on a multi round-trip
// retry its answers and the requestState loadout gave it. A 2025 request has none of it.
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  type ClientCapabilities,
  type LoggingLevel,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { LoggingLevelSchema } from '@modelcontextprotocol/core';
import { carriesEnvelope } from '../../shared/index.js';
import type { Principal } from '../../identity/index.js';
import type { InputRounds } from '../inputRounds.js';
import type { SessionHub } from '../sessionHub.js';

/** The gateway's services a 2026-07-28 request uses (GatewayContext has them). */
export interface ModernServices {
  /** Calls waiting for a client's retry. */
  readonly inputRounds: InputRounds;
  /** Routes a server's log messages to the requests in flight to it. */
  readonly hub: SessionHub;
  /** Whose requests these are: a `credentials: per-user` server's go with their own token. */
  readonly principal?: Principal;
}

/** A 2026-07-28 request's envelope and retry fields. */
export interface ModernRequest {
  readonly capabilities: ClientCapabilities | undefined;
  /** The level of the server log messages this request wants; none when absent. */
  readonly logLevel: LoggingLevel | undefined;
  /** The requestState of a retry ('' when the client sent one that is not a string: never known). */
  readonly requestState: string | undefined;
  readonly inputResponses: Readonly<Record<string, unknown>> | undefined;
  readonly services: ModernServices;
}

const LEVELS: ReadonlySet<string> = new Set(LoggingLevelSchema.options);

/** The modern part of a request as it came off the wire, or undefined for a 2025 request. */
export function modernRequestOfParams(params: Record<string, unknown> | undefined, services: ModernServices): ModernRequest | undefined {
  if (!carriesEnvelope(params)) return undefined;
  return modernRequest(params._meta, params.requestState, params.inputResponses, services);
}

/** The modern part of a request the SDK Server handles, or undefined for a 2025 request. */
export function modernRequestOfContext(ctx: ServerContext, services: ModernServices): ModernRequest | undefined {
  const { envelope } = ctx.mcpReq;
  if (!envelope) return undefined;
  return modernRequest(envelope, ctx.mcpReq.requestState(), ctx.mcpReq.inputResponses, services);
}

function modernRequest(
  envelope: Record<string, unknown>,
  requestState: unknown,
  inputResponses: unknown,
  services: ModernServices,
): ModernRequest {
  const level = envelope[LOG_LEVEL_META_KEY];
  return {
    capabilities: envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined,
    logLevel: typeof level === 'string' && LEVELS.has(level) ? (level as LoggingLevel) : undefined,
    requestState: requestState === undefined ? undefined : typeof requestState === 'string' ? requestState : '',
    inputResponses: typeof inputResponses === 'object' && inputResponses !== null ? (inputResponses as Record<string, unknown>) : undefined,
    services,
  };
}
