// The era decisions both sides ask: a first message, a negotiated version, a request's params, a
// 2026-07-28 call result.
import { LATEST_PROTOCOL_VERSION, SERVER_INFO_META_KEY } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { MODERN_REVISION, carriesEnvelope, eraOfVersion, modernCallResult, opensLegacyEra } from './protocolEras.js';

const SERVER_INFO = { name: 'loadout', version: '1' };

describe('protocol eras', () => {
  it('takes only an initialize request as opening the 2025 era', () => {
    expect(opensLegacyEra({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } as never)).toBe(true);
    expect(opensLegacyEra({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} } as never)).toBe(false);
    expect(opensLegacyEra({ jsonrpc: '2.0', method: 'initialize' } as never)).toBe(false);
  });

  it('tells the era of a negotiated version: initialize negotiates the 2025 ones', () => {
    expect(eraOfVersion(undefined)).toBeUndefined();
    expect(eraOfVersion(LATEST_PROTOCOL_VERSION)).toBe('legacy');
    expect(eraOfVersion('2025-06-18')).toBe('legacy');
    expect(eraOfVersion(MODERN_REVISION)).toBe('modern');
  });

  it('takes params as 2026-07-28 when their _meta names a protocol version', () => {
    expect(carriesEnvelope({ _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_REVISION } })).toBe(true);
    expect(carriesEnvelope({ _meta: { progressToken: 1 } })).toBe(false);
    expect(carriesEnvelope({ _meta: null })).toBe(false);
    expect(carriesEnvelope(undefined)).toBe(false);
  });

  it('completes a 2026-07-28 call result and names the server, keeping what the result says already', () => {
    expect(modernCallResult({ content: [] }, SERVER_INFO)).toEqual({
      content: [],
      resultType: 'complete',
      _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO },
    });
    const named = { content: [], resultType: 'complete', _meta: { [SERVER_INFO_META_KEY]: { name: 'other', version: '2' } } };
    expect(modernCallResult(named, SERVER_INFO)).toBe(named);
    expect(modernCallResult({ content: [], _meta: { trace: 'x' } }, SERVER_INFO)).toEqual({
      content: [],
      resultType: 'complete',
      _meta: { trace: 'x', [SERVER_INFO_META_KEY]: SERVER_INFO },
    });
  });
});
