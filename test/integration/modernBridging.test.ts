// A 2026-07-28 client in front of 2025-era servers, over real stdio: a server's elicitation or
// sampling mid-call reaches the client as an InputRequiredResult and its retry goes back as the
// server's answer (multi round-trip requests); progress and cancellation per request; a
// request's own log level; resource updates and list changes on subscriptions/listen; no tasks.
import { LOG_LEVEL_META_KEY, type LoggingMessageNotification } from '@modelcontextprotocol/client';
import { CallToolResultSchema } from '@modelcontextprotocol/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml, type GatewayProcess } from '../helpers/gateway.js';
import { progressBeforeResult } from '../helpers/notifications.js';

// What the embedded requests of an InputRequiredResult look like to a manual (allowInputRequired) caller.
interface InputRequired {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
}

describe('a 2026-07-28 client through loadout to 2025-era servers', () => {
  const sandbox = useGatewaySandbox();

  beforeEach(async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      ia: nodeServer(fixture('interactive')),
      slowpoke: nodeServer(fixture('interactive'), { timeout_seconds: 1 }),
      test: nodeServer(fixture('contentServer')),
    });
  });

  async function startModern(tools: string[]): Promise<GatewayProcess> {
    const gateway = await sandbox.start({
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: { form: {} }, sampling: {} },
    });
    expect(gateway.client.getProtocolEra()).toBe('modern');
    const built = await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'kit', tools, equip: true } });
    expect(built.isError).toBeFalsy();
    return gateway;
  }

  it("answers a server's elicitation mid-call through the client's elicitation handler", async () => {
    const { client } = await startModern(['ia.confirm']);
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });
    expect(textOf(await client.callTool({ name: 'ia_confirm', arguments: {} }))).toBe('accept: {"ok":true}');
    expect(asked).toEqual(['Proceed?']);
  });

  it('takes two rounds for two elicitations in one call', async () => {
    const { client } = await startModern(['ia.interview']);
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      const content: Record<string, string> = request.params.message.includes('name') ? { name: 'Ada' } : { colour: 'green' };
      return { action: 'accept', content };
    });
    expect(textOf(await client.callTool({ name: 'ia_interview', arguments: {} }))).toBe('name=Ada, colour=green');
    expect(asked).toEqual(['Your name?', 'Your colour?']);
  });

  it("answers a server's sampling request through the client's sampling handler", async () => {
    const { client } = await startModern(['ia.ask']);
    client.setRequestHandler('sampling/createMessage', (request) => {
      const [message] = request.params.messages;
      const said = message?.content && 'text' in message.content ? message.content.text : '?';
      return { role: 'assistant', model: 'fake', content: { type: 'text', text: `echo ${said}` } };
    });
    expect(textOf(await client.callTool({ name: 'ia_ask', arguments: { prompt: 'hi' } }))).toBe('model said: echo hi');
  });

  it('refuses a forged requestState and one kept past the timeout, with a clear error', async () => {
    const gateway = await startModern(['slowpoke.confirm']);
    const { client } = gateway;
    const retry = (requestState: string) =>
      client.request(
        {
          method: 'tools/call',
          params: { name: 'slowpoke_confirm', arguments: {}, requestState, inputResponses: { x: { action: 'accept', content: {} } } },
        },
        CallToolResultSchema,
      );
    await expect(retry('forged-state')).rejects.toThrow(/requestState .*unknown or expired/);

    const first = (await client.callTool(
      { name: 'slowpoke_confirm', arguments: {} },
      { allowInputRequired: true },
    )) as unknown as InputRequired;
    expect(first.resultType).toBe('input_required');
    expect(Object.values(first.inputRequests ?? {}).map((request) => request.method)).toEqual(['elicitation/create']);
    expect(first.requestState).toEqual(expect.any(String));
    // The client never answers within the server's timeout_seconds (1 s): loadout drops the call.
    await eventually(() => gateway.stderr().includes('dropped a call waiting for input'), 10_000, 'the waiting call to expire');
    await expect(retry(first.requestState!)).rejects.toThrow(/requestState .*unknown or expired/);
  });

  it('keeps progress and cancellation per request', async () => {
    const { client, received } = await startModern(['ia.progress', 'ia.wait', 'ia.cancellations']);
    const done = await client.callTool({ name: 'ia_progress', arguments: { steps: 3, delayMs: 50 } }, { onprogress: () => undefined });
    expect(textOf(done)).toBe('did 3 steps');
    // Every step, before the result, read at the transport (see tapReceived).
    expect(progressBeforeResult(received, 'did 3 steps')).toEqual([1, 2, 3]);

    const abort = new AbortController();
    const waiting = client.callTool(
      { name: 'ia_wait', arguments: { ms: 60_000 } },
      { signal: abort.signal, onprogress: () => abort.abort('enough') },
    );
    await expect(waiting).rejects.toThrow();
    await eventually(async () => textOf(await client.callTool({ name: 'ia_cancellations', arguments: {} })) === '1', 10_000, 'the cancel');
  });

  it("passes a server's log messages during a request at that request's log level only", async () => {
    const { client } = await startModern(['test.log']);
    const heard: string[] = [];
    client.setNotificationHandler('notifications/message', (notification: LoggingMessageNotification) => {
      heard.push(String(notification.params.data));
    });
    const log = (level: string, message: string, logLevel?: string) =>
      client.callTool({
        name: 'test_log',
        arguments: { level, message },
        ...(logLevel ? { _meta: { [LOG_LEVEL_META_KEY]: logLevel } } : {}),
      });
    await log('debug', 'below the level', 'info');
    await log('warning', 'no level asked');
    await log('warning', 'at the level', 'info');
    await eventually(() => heard.includes('at the level'), 10_000, 'the log message');
    expect(heard).toEqual(['at the level']);
  });

  it('subscribes downstream for a listen stream with resourceSubscriptions, and releases it on close', async () => {
    const { client } = await startModern(['test.touch']);
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (notification) => void updates.push(notification.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: ['test://watched-resource'] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['test://watched-resource']);

    await eventually(
      async () => textOf(await client.callTool({ name: 'test_touch', arguments: {} })).endsWith('subscribed: test://watched-resource'),
      10_000,
      'the downstream subscription',
    );
    await eventually(() => updates.length > 0, 10_000, 'the resource update');
    expect(updates[0]).toBe('test://watched-resource');

    await subscription.close();
    await eventually(
      async () => textOf(await client.callTool({ name: 'test_touch', arguments: {} })).endsWith('subscribed: '),
      10_000,
      'the downstream unsubscribe',
    );
  });

  it('sends prompts and resources list changes on the listen stream', async () => {
    const { client } = await startModern(['test.add-prompt']);
    let promptChanges = 0;
    let resourceChanges = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void promptChanges++);
    client.setNotificationHandler('notifications/resources/list_changed', () => void resourceChanges++);
    await client.listen({ promptsListChanged: true, resourcesListChanged: true });

    await client.callTool({ name: 'test_add-prompt', arguments: {} });
    await eventually(() => promptChanges > 0, 10_000, 'prompts list_changed');
    // Equipping a server with resources changes what the session lists.
    await client.callTool({ name: 'build-toolset', arguments: { name: 'more', tools: ['ia.echo', 'test.touch'], equip: true } });
    await client.callTool({ name: 'build-toolset', arguments: { name: 'less', tools: ['ia.echo'], equip: true } });
    await eventually(() => resourceChanges > 0, 10_000, 'resources list_changed');
  });

  it('does not advertise tasks in the 2026-07-28 era', async () => {
    const gateway = await startModern(['ia.echo']);
    expect(gateway.client.getDiscoverResult()?.capabilities).not.toHaveProperty('tasks');
    expect(gateway.client.getServerCapabilities()).not.toHaveProperty('tasks');
  });
});
