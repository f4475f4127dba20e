import type { Progress } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, makeTempDirs, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import {
  connectHttp,
  httpHarness,
  startEverythingHttp,
  startFixtureServer,
  startHttpGateway,
  type HttpClient,
  type HttpHarness,
  type ListeningProcess,
} from '../helpers/http.js';

describe('downstream servers over streamable HTTP and SSE', () => {
  let web: ListeningProcess;
  let legacy: ListeningProcess;
  let harness: HttpHarness;
  beforeAll(async () => {
    [web, legacy] = await Promise.all([startFixtureServer('http'), startFixtureServer('sse')]);
  });
  afterAll(async () => {
    await Promise.allSettled([web.close('SIGKILL'), legacy.close('SIGKILL')]);
  });
  beforeEach(async () => {
    harness = await httpHarness();
    await writeServersYaml(harness.dirs.configDir, {
      web: { type: 'http', url: web.url, headers: { 'X-Team': '${FIXTURE_TEAM}' } },
      legacy: { type: 'sse', url: legacy.url },
      brief: { type: 'http', url: web.url, idle_timeout_minutes: 0.01 },
    });
    await writeToolset(harness.dirs.configDir, 'plain', ['web.echo', 'legacy.echo']);
    await harness.start([], { FIXTURE_TEAM: 'blue' });
  });
  afterEach(() => harness.teardown());
  const connect = (options: Parameters<HttpHarness['connect']>[0] = {}): Promise<HttpClient> => harness.connect(options);

  it('discovers and calls tools of an HTTP and an SSE server, sending configured headers with ${VAR} expanded', async () => {
    const { client } = await connect();
    await eventually(
      async () => {
        const found = await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
        return textOf(found).includes('web.echo') && textOf(found).includes('legacy.echo');
      },
      15_000,
      'discovery of both servers',
    );
    await client.callTool({ name: 'equip-toolset', arguments: { name: 'plain' } });
    expect(textOf(await client.callTool({ name: 'web_echo', arguments: { text: 'over http' } }))).toBe('over http');
    expect(textOf(await client.callTool({ name: 'legacy_echo', arguments: { text: 'over sse' } }))).toBe('over sse');
    expect(textOf(await client.callTool({ name: 'call-tool', arguments: { tool: 'web.header', arguments: { name: 'X-Team' } } }))).toBe(
      'blue',
    );
  });

  it('connects to a lazy HTTP server only when a tool is used, and ends its session when idle', async () => {
    const { client } = await connect();
    await eventually(
      async () => textOf(await client.callTool({ name: 'discover-all-tools', arguments: {} })).includes('brief.echo'),
      15_000,
      'discovery',
    );
    const probe = await connectHttp(web.url);
    const openSessions = async (): Promise<number> => Number(textOf(await probe.client.callTool({ name: 'sessions', arguments: {} })));
    try {
      // Discovery connected and disconnected again: only the probe's session is open.
      await eventually(async () => (await openSessions()) === 1, 10_000, 'discovery sessions to end');
      expect(textOf(await client.callTool({ name: 'call-tool', arguments: { tool: 'brief.echo', arguments: { text: 'wake' } } }))).toBe(
        'wake',
      );
      expect(await openSessions()).toBe(2);
      // idle_timeout_minutes 0.01: the connection ends (with a DELETE) soon after the call.
      await eventually(async () => (await openSessions()) === 1, 10_000, 'idle disconnect');
    } finally {
      await probe.close();
    }
  });

  it('relays a sampling request made over a streamable HTTP downstream', async () => {
    const { client } = await connect({ capabilities: { sampling: {} } });
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'via http' },
      model: 'test',
    }));
    await eventually(
      async () => textOf(await client.callTool({ name: 'discover-all-tools', arguments: {} })).includes('web.ask'),
      15_000,
      'discovery',
    );
    const result = await client.callTool({ name: 'call-tool', arguments: { tool: 'web.ask', arguments: { prompt: 'hi' } } });
    expect(textOf(result)).toBe('model said: via http');
  });

  it('re-lists a server that announces list_changed and notifies only the sessions whose tools changed', async () => {
    const everything = await connect();
    const plain = await connect();
    await eventually(
      async () => textOf(await everything.client.callTool({ name: 'discover-all-tools', arguments: {} })).includes('web.grow'),
      15_000,
      'discovery',
    );
    await everything.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    await plain.client.callTool({ name: 'equip-toolset', arguments: { name: 'plain' } });
    const before = { everything: everything.listChangedCount(), plain: plain.listChangedCount() };
    const grown = textOf(await everything.client.callTool({ name: 'web_grow', arguments: {} }));
    expect(grown).toMatch(/^grown_\d+$/);
    await eventually(
      async () => (await everything.client.listTools()).tools.some((tool) => tool.name === `web_${grown}`),
      15_000,
      'the grown tool',
    );
    await everything.waitForListChanged(before.everything + 1);
    expect(everything.listChangedCount()).toBe(before.everything + 1);
    expect(plain.listChangedCount()).toBe(before.plain);
    expect((await plain.client.listTools()).tools.some((tool) => tool.name === `web_${grown}`)).toBe(false);
    expect(textOf(await everything.client.callTool({ name: `web_${grown}`, arguments: {} }))).toContain('unknown tool');
  });
});

describe('server-everything over streamable HTTP through loadout', () => {
  let everything: ListeningProcess;
  let dirs: TempDirs;
  let gateway: ListeningProcess;
  let client: HttpClient;
  beforeAll(async () => {
    everything = await startEverythingHttp();
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { everything: { type: 'http', url: everything.url } });
    gateway = await startHttpGateway(dirs, ['--equip', 'all']);
    client = await connectHttp(gateway.url, { capabilities: { sampling: {} } });
    await eventually(
      async () => (await client.client.listTools()).tools.some((tool) => tool.name === 'everything_echo'),
      20_000,
      'discovery',
    );
  });
  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    // server-everything ignores SIGTERM while sessions are open.
    await everything?.close('SIGKILL');
    await dirs?.cleanup();
  });

  it('exposes its tools, including the sampling and elicitation ones loadout now qualifies for', async () => {
    const names = (await client.client.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('everything_'));
    expect(names).toEqual(
      expect.arrayContaining([
        'everything_echo',
        'everything_trigger-long-running-operation',
        'everything_trigger-sampling-request',
        'everything_trigger-elicitation-request',
      ]),
    );
  });

  it('passes structured content and images through unchanged', async () => {
    const structured = await client.client.callTool({ name: 'everything_get-structured-content', arguments: { location: 'New York' } });
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
    const image = await client.client.callTool({ name: 'everything_get-tiny-image', arguments: {} });
    expect((image.content as Array<{ type: string }>).map((block) => block.type)).toContain('image');
  });

  it("passes progress of the long-running operation through with the client's token", async () => {
    const seen: Progress[] = [];
    const result = await client.client.callTool(
      { name: 'everything_trigger-long-running-operation', arguments: { duration: 1.5, steps: 3 } },
      { onprogress: (progress) => seen.push(progress) },
    );
    expect(textOf(result)).toContain('Long running operation completed');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[0]).toMatchObject({ progress: 1, total: 3 });
  });

  it('round-trips its sampling request to the client', async () => {
    client.client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled!' },
      model: 'test',
    }));
    const result = await client.client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'say something' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('sampled!');
  });

  it('lists, gets, reads and completes its prompts and resources through the HTTP connection', async () => {
    const prompts = (await client.client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).toEqual(expect.arrayContaining(['everything_simple-prompt', 'everything_args-prompt']));
    const got = await client.client.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Oslo' } });
    expect(JSON.stringify(got.messages)).toContain('Oslo');
    const { resources } = await client.client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain('demo://resource/static/document/architecture.md');
    const read = await client.client.readResource({ uri: 'demo://resource/dynamic/blob/2' });
    expect(read.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/blob/2' });
    expect(typeof (read.contents[0] as { blob?: unknown }).blob).toBe('string');
    const completion = await client.client.complete({
      ref: { type: 'ref/prompt', name: 'everything_completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(completion.completion.values).toContain('Engineering');
  });
});

async function writeToolset(configDir: string, name: string, tools: string[]): Promise<void> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(`${configDir}/toolsets`, { recursive: true });
  await writeFile(`${configDir}/toolsets/${name}.yaml`, `name: ${name}\ntools:\n${tools.map((tool) => `  - ${tool}`).join('\n')}\n`);
}
