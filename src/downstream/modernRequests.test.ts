// ModernRequests' bounds on what a 2026-07-28 server may ask within a request: the rounds of input,
// the kinds of input loadout relays, roots only for a request a client made, and a log level that
// rides in each request's envelope. The layer and Client are stand-ins that record what is sent.
import { LOG_LEVEL_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../shared/index.js';
import type { RelayedRequest } from './inFlightCallers.js';
import { MAX_INPUT_ROUNDS, ModernRequests } from './modernRequests.js';
import type { Envelope, RequestLayer } from './requestLayer.js';

const ELICIT = { method: 'elicitation/create', params: { message: 'Which?', requestedSchema: { type: 'object', properties: {} } } };

function modern(
  answer: (method: string, params: Record<string, unknown> | undefined) => Record<string, unknown>,
  capabilities: Record<string, unknown> = {},
) {
  const sent: Array<{ method: string; params: Record<string, unknown> | undefined }> = [];
  const envelopes: Envelope[] = [];
  const layer = {
    request: vi.fn((method: string, params: Record<string, unknown> | undefined) => {
      sent.push({ method, params });
      return Promise.resolve(answer(method, params));
    }),
    setEnvelope: (envelope: Envelope) => envelopes.push(envelope),
  };
  // Each listen stream opened, with its filter and whether it was closed since.
  const streams: Array<{ filter: unknown; closed: boolean }> = [];
  const listen = (filter: unknown) => {
    const stream = { filter, closed: false };
    streams.push(stream);
    return Promise.resolve({ closed: new Promise(() => undefined), close: () => ((stream.closed = true), Promise.resolve()) });
  };
  const client = { getNegotiatedProtocolVersion: () => '2026-07-28', getServerCapabilities: () => capabilities, listen };
  const relay = vi.fn((_request: RelayedRequest) => Promise.resolve({ action: 'accept', content: {} }));
  const requests = new ModernRequests({
    server: 'srv',
    client: client as unknown as Client,
    layer: layer as unknown as RequestLayer,
    clientInfo: { name: 'loadout', version: '0' },
    capabilities: {},
    relay,
    logger: silentLogger,
  });
  return { requests, sent, envelopes, relay, streams };
}

describe('ModernRequests', () => {
  it('relays each round of input and resends with the answers and requestState, until the result is complete', async () => {
    const { requests, sent, relay } = modern((_method, params) =>
      params?.inputResponses ? { content: [] } : { resultType: 'input_required', inputRequests: { q: ELICIT }, requestState: 'S1' },
    );
    await expect(requests.request('tools/call', { name: 't' })).resolves.toEqual({ content: [] });
    expect(relay).toHaveBeenCalledTimes(1);
    expect(sent[1]!.params).toEqual({ name: 't', inputResponses: { q: { action: 'accept', content: {} } }, requestState: 'S1' });
  });

  it('gives up on a server that keeps asking for input, after MAX_INPUT_ROUNDS rounds', async () => {
    const { requests, sent } = modern(() => ({ resultType: 'input_required', inputRequests: { q: ELICIT } }));
    await expect(requests.request('tools/call', { name: 't' })).rejects.toMatchObject({
      code: ProtocolErrorCode.InternalError,
      message: expect.stringContaining(`after ${MAX_INPUT_ROUNDS} rounds`),
    });
    expect(sent).toHaveLength(MAX_INPUT_ROUNDS + 1);
  });

  it('refuses input it does not relay, and roots during a request no client made', async () => {
    const other = modern(() => ({ resultType: 'input_required', inputRequests: { q: { method: 'tools/call', params: {} } } }));
    await expect(other.requests.request('tools/call', { name: 't' })).rejects.toThrow(/asked for tools\/call input/);
    const roots = modern(() => ({ resultType: 'input_required', inputRequests: { r: { method: 'roots/list' } } }));
    await expect(roots.requests.request('prompts/get', { name: 'p' })).rejects.toThrow(/no roots to give it/);
    expect(roots.relay).not.toHaveBeenCalled();
  });

  it('keeps the log level a client sets as an envelope default, and drops it when cleared', async () => {
    const { requests, envelopes } = modern(() => ({}));
    await requests.request('logging/setLevel', { level: 'debug' });
    expect(envelopes.at(-1)?.defaults).toEqual({ [LOG_LEVEL_META_KEY]: 'debug' });
    await requests.request('logging/setLevel', {});
    expect(envelopes.at(-1)?.defaults).toBeUndefined();
  });

  it('refuses a subscription without a uri, or to a server that offers none', async () => {
    const { requests } = modern(() => ({}));
    await expect(requests.request('resources/subscribe', {})).rejects.toMatchObject({ code: ProtocolErrorCode.InvalidParams });
    await expect(requests.request('resources/subscribe', { uri: 'file:///a' })).rejects.toMatchObject({
      code: ProtocolErrorCode.MethodNotFound,
    });
  });

  it('reshapes the listen stream as resources are subscribed and unsubscribed, a new stream before the old one closes', async () => {
    const { requests, streams, sent } = modern(() => ({}), { tools: { listChanged: true }, resources: { subscribe: true } });
    await requests.start();
    await requests.request('resources/subscribe', { uri: 'note://a' });
    // Subscribing twice changes nothing: no stream is opened again.
    await requests.request('resources/subscribe', { uri: 'note://a' });
    await requests.request('resources/unsubscribe', { uri: 'note://a' });
    expect(streams).toEqual([
      { filter: { toolsListChanged: true }, closed: true },
      { filter: { toolsListChanged: true, resourceSubscriptions: ['note://a'] }, closed: true },
      { filter: { toolsListChanged: true }, closed: false },
    ]);
    // The subscription is the stream's business: the server is sent no resources/subscribe.
    expect(sent).toEqual([]);
  });
});
