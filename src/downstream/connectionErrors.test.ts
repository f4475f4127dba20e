import { SdkHttpError, SdkErrorCode, SseError, UnauthorizedError } from '@modelcontextprotocol/client';
import { OAuthError, OAuthErrorCode, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { LoadoutError } from '../shared/index.js';
import { isSessionLost, refusesAccess } from './connectionErrors.js';

const httpFailure = (status: number) =>
  new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint: gone', { status, statusText: '' });
const startFailure = (cause: Error) => new LoadoutError('SERVER_START_FAILED', "Server 'web' failed to start", { cause });

describe('isSessionLost', () => {
  it('is a 404 answered to a streamable HTTP or an SSE POST', () => {
    expect(isSessionLost(httpFailure(404))).toBe(true);
    expect(isSessionLost(new Error('Error POSTing to endpoint (HTTP 404): Session not found'))).toBe(true);
    expect(isSessionLost(httpFailure(500))).toBe(false);
    expect(isSessionLost(new Error('Error POSTing to endpoint (HTTP 500): HTTP 404 upstream'))).toBe(false);
  });

  it('is never a JSON-RPC error the server sent, whatever its code or words', () => {
    expect(isSessionLost(new ProtocolError(404, 'not found'))).toBe(false);
    expect(isSessionLost(new ProtocolError(ProtocolErrorCode.InternalError, 'Error POSTing to endpoint (HTTP 404): relayed'))).toBe(false);
  });
});

describe('refusesAccess', () => {
  it('is a 401 or 403 answer, loadout refusing credentials, or an OAuth refusal, among the causes', async () => {
    expect(await refusesAccess(startFailure(httpFailure(403)))).toBe(true);
    expect(await refusesAccess(startFailure(httpFailure(401)))).toBe(true);
    expect(await refusesAccess(startFailure(new Error('Error POSTing to endpoint (HTTP 403): Forbidden')))).toBe(true);
    expect(await refusesAccess(startFailure(new SseError(401, 'Non-200 status code (401)', undefined as never)))).toBe(true);
    expect(await refusesAccess(new LoadoutError('AUTH_FAILED', "Server 'web' refused loadout's credentials (HTTP 401)"))).toBe(true);
    expect(await refusesAccess(startFailure(new OAuthError(OAuthErrorCode.InvalidToken, 'expired')))).toBe(true);
    expect(await refusesAccess(startFailure(new UnauthorizedError()))).toBe(true);
  });

  it('is not a failure that only says so in words: a JSON-RPC error, another status, another OAuth error', async () => {
    const listed = new ProtocolError(ProtocolErrorCode.InternalError, 'Unauthorized: invalid_token (HTTP 401, 403)');
    expect(await refusesAccess(new LoadoutError('LIST_FAILED', "Server 'web' started, but its tools/list failed", { cause: listed }))).toBe(
      false,
    );
    expect(await refusesAccess(new ProtocolError(403, 'forbidden'))).toBe(false);
    expect(await refusesAccess(startFailure(new Error('connect ECONNREFUSED: 401 unauthorized invalid_token')))).toBe(false);
    expect(await refusesAccess(startFailure(httpFailure(500)))).toBe(false);
    expect(await refusesAccess(startFailure(new OAuthError(OAuthErrorCode.ServerError, 'invalid_token 401')))).toBe(false);
  });
});
