import type { Progress } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RICH_RESULT } from '../fixtures/richResult.js';
import { eventually, fixture, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { httpHarness, type HttpClient, type HttpHarness } from '../helpers/http.js';

describe('loadout serve --http: passthrough', () => {
  let harness: HttpHarness;
  beforeEach(async () => {
    harness = await httpHarness();
    // `slow` stays connected after discovery so its 1 s timeout bounds calls, not its start.
    await writeServersYaml(harness.dirs.configDir, {
      live: nodeServer(fixture('interactive')),
      slow: nodeServer(fixture('interactive'), { timeout_seconds: 1, always_on: true }),
    });
    await harness.start(['--equip', 'all']);
  });
  afterEach(() => harness.teardown());

  async function connect(options: Parameters<HttpHarness['connect']>[0] = {}): Promise<HttpClient> {
    const client = await harness.connect(options);
    // On a cold cache the equipped tools appear once start-up discovery has finished.
    await eventually(
      async () => (await client.client.listTools()).tools.some((tool) => tool.name === 'live_echo'),
      15_000,
      'discovered tools',
    );
    return client;
  }

  it("passes progress through with the client's own token, and progress keeps a long call within its timeout", async () => {
    const { client } = await connect();
    const seen: Progress[] = [];
    // timeout_seconds is 1; six steps 300 ms apart take about 1.8 s.
    const result = await client.callTool(
      { name: 'slow_progress', arguments: { steps: 6, delayMs: 300 } },
      {
        onprogress: (progress) => seen.push(progress),
      },
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('did 6 steps');
    // The SDK's Client handles notifications a microtask after responses, so a progress sent
    // right before the result (step 6) may be dropped by any SDK client; the rest arrive in order.
    expect(seen.map((progress) => progress.progress).slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(seen[0]).toMatchObject({ total: 6, message: 'step 1' });
    // Without progress the same call runs into the 1 s timeout.
    const timedOut = await client.callTool({ name: 'slow_progress', arguments: { steps: 6, delayMs: 300 } });
    expect(timedOut.isError).toBe(true);
    expect(textOf(timedOut)).toContain('within 1 s');
  });

  it('cancels the downstream call when the client cancels, and drops a late answer', async () => {
    const { client } = await connect();
    const errors: string[] = [];
    client.onerror = (error) => errors.push(error.message);
    const abort = new AbortController();
    const call = client.callTool(
      { name: 'live_wait', arguments: { ms: 60_000, answerLate: true } },
      {
        signal: abort.signal,
        onprogress: () => abort.abort('user pressed escape'),
        timeout: 30_000,
      },
    );
    await expect(call).rejects.toThrow();
    await eventually(
      async () => textOf(await client.callTool({ name: 'live_cancellations', arguments: {} })) === '1',
      10_000,
      'downstream cancellation',
    );
    // The late answer (sent 100 ms after the cancel) reached loadout and went no further: the
    // count is read on the same pipe after it.
    await eventually(
      async () => textOf(await client.callTool({ name: 'live_late_answers', arguments: {} })) === '1',
      10_000,
      'the late answer',
    );
    expect(errors).toEqual([]);
    expect(textOf(await client.callTool({ name: 'live_echo', arguments: { text: 'still here' } }))).toBe('still here');
  });

  it("cancels a session's calls still running downstream when the session ends", async () => {
    const leaving = await connect();
    let started!: () => void;
    const waiting = new Promise<void>((resolve) => (started = resolve));
    const call = leaving.client.callTool(
      { name: 'live_wait', arguments: { ms: 60_000 } },
      {
        onprogress: () => started(),
        timeout: 30_000,
      },
    );
    call.catch(() => undefined);
    await waiting;
    await leaving.close();
    const { client } = await connect();
    await eventually(
      async () => textOf(await client.callTool({ name: 'live_cancellations', arguments: {} })) === '1',
      10_000,
      'downstream cancellation',
    );
  });

  it('relays a sampling request to the calling session when it declared sampling', async () => {
    const asker = await connect({ capabilities: { sampling: {} } });
    const prompts: string[] = [];
    asker.client.setRequestHandler('sampling/createMessage', (request) => {
      const content = request.params.messages[0]!.content;
      prompts.push(!Array.isArray(content) && content.type === 'text' ? content.text : '?');
      return { role: 'assistant', content: { type: 'text', text: 'forty-two' }, model: 'test-model' };
    });
    const bystander = await connect({ capabilities: { sampling: {} } });
    bystander.client.setRequestHandler('sampling/createMessage', () => {
      throw new Error('the bystander must not be asked');
    });
    const result = await asker.client.callTool({ name: 'live_ask', arguments: { prompt: 'meaning of life?' } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('model said: forty-two');
    expect(prompts).toEqual(['meaning of life?']);
    // call-tool takes the same path.
    const viaCallTool = await asker.client.callTool({ name: 'call-tool', arguments: { tool: 'live.ask', arguments: { prompt: 'again' } } });
    expect(textOf(viaCallTool)).toBe('model said: forty-two');
  });

  it('answers a sampling request with a clear error when the calling client did not declare sampling', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'live_ask', arguments: { prompt: 'hello' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('did not declare the sampling capability');
  });

  it('relays an elicitation request to a client that declared elicitation, and refuses for one that did not', async () => {
    const asked = await connect({ capabilities: { elicitation: {} } });
    asked.client.setRequestHandler('elicitation/create', (request) => {
      expect(request.params.message).toBe('Proceed?');
      return { action: 'accept', content: { ok: true } };
    });
    expect(textOf(await asked.client.callTool({ name: 'live_confirm', arguments: {} }))).toBe('accept: {"ok":true}');
    const { client } = await connect({ capabilities: { sampling: {} } });
    const refused = await client.callTool({ name: 'live_confirm', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('did not declare the elicitation capability');
  });

  it('returns structuredContent, images, resource links and _meta unchanged', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'live_rich', arguments: {} });
    expect(result).toEqual(RICH_RESULT);
  });
});
