// Prompts, resources, templates, subscriptions, completions and logging through loadout, over
// real stdio and real streamable HTTP, in front of server-everything, server-memory,
// server-filesystem and two copies of the content fixture (servers `a` and `b`, which share
// every URI, so theirs are shown in the prefixed form).
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, ProtocolError } from '@modelcontextprotocol/client';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  THIRD_PARTY,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type TempDirs,
} from '../helpers/gateway.js';
import { startHttpGateway, connectHttp, type ListeningProcess } from '../helpers/http.js';
import { collectNotifications, type NotificationLog } from '../helpers/notifications.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

interface Session {
  client: Client;
  notifications: NotificationLog;
}

async function errorOf(promise: Promise<unknown>): Promise<ProtocolError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected an MCP error');
}

async function withDirectEverything<T>(use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [THIRD_PARTY.everything], stderr: 'ignore' }));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe.each(['stdio', 'http'] as const)('prompts, resources, completions and logging over %s', (mode) => {
  let dirs: TempDirs;
  let first: Session;
  const closers: Array<() => Promise<void>> = [];
  let http: ListeningProcess | undefined;

  const connect = async (): Promise<Session> => {
    if (mode === 'stdio') {
      const gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
      closers.push(() => gateway.close());
      return { client: gateway.client, notifications: collectNotifications(gateway.client) };
    }
    http ??= await startHttpGateway(dirs, ['--equip', 'all']);
    const connected = await connectHttp(http.url);
    closers.push(() => connected.close());
    return { client: connected.client, notifications: collectNotifications(connected.client) };
  };

  beforeAll(async () => {
    dirs = await makeTempDirs();
    const files = path.join(dirs.root, 'files');
    await mkdir(files);
    await writeServersYaml(dirs.configDir, {
      everything: nodeServer(THIRD_PARTY.everything),
      a: nodeServer(fixture('contentServer')),
      b: nodeServer(fixture('contentServer')),
      memory: nodeServer(THIRD_PARTY.memory, { env: { MEMORY_FILE_PATH: path.join(dirs.root, 'memory.jsonl') } }),
      files: nodeServer(THIRD_PARTY.filesystem, { args: [THIRD_PARTY.filesystem, files] }),
    });
    first = await connect();
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await http?.close();
    await dirs.cleanup();
  });

  it('declares prompts, resources (subscribe, listChanged), completions and logging', () => {
    expect(first.client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
      logging: {},
    });
  });

  it('lists every server prompt under flattened names and forwards prompts/get unchanged', async () => {
    const { prompts } = await first.client.listPrompts();
    const names = prompts.map((prompt) => prompt.name);
    expect(names).toEqual(
      expect.arrayContaining(['everything_simple-prompt', 'everything_args-prompt', 'a_simple_prompt', 'b_prompt_with_image']),
    );
    // server-memory and server-filesystem declare no prompts, so they add none.
    expect(names.filter((name) => !/^(everything|a|b)_/.test(name))).toEqual([]);
    const direct = await withDirectEverything(async (client) => ({
      listed: (await client.listPrompts()).prompts,
      got: await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon', state: 'Rhone' } }),
    }));
    expect(prompts.filter((prompt) => prompt.name.startsWith('everything_'))).toEqual(
      direct.listed.map((prompt) => ({ ...prompt, name: `everything_${prompt.name}` })),
    );
    expect(await first.client.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Lyon', state: 'Rhone' } })).toEqual(
      direct.got,
    );
    const image = await first.client.getPrompt({ name: 'a_prompt_with_image' });
    expect(image.messages[0]!.content).toEqual({ type: 'image', data: PNG, mimeType: 'image/png' });
    const embedded = await first.client.getPrompt({ name: 'b_prompt_with_embedded_resource', arguments: { resourceUri: 'test://x' } });
    expect(embedded.messages[0]!.content).toMatchObject({
      type: 'resource',
      resource: { uri: 'test://x', text: 'Embedded resource content for testing.' },
    });
  });

  it('answers an unknown prompt with InvalidParams naming it', async () => {
    const error = await errorOf(first.client.getPrompt({ name: 'nobody_prompt' }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain("Prompt 'nobody_prompt' is not listed");
  });

  it('lists resources with unique URIs unchanged and shared ones prefixed, and reads them byte-exact', async () => {
    const { resources } = await first.client.listResources();
    const uris = resources.map((resource) => resource.uri);
    expect(uris).toContain('demo://resource/static/document/architecture.md');
    expect(uris).toEqual(
      expect.arrayContaining(['loadout://a/test://static-text', 'loadout://b/test://static-text', 'loadout://a/test://static-binary']),
    );
    expect(uris).not.toContain('test://static-text');
    const binary = await first.client.readResource({ uri: 'loadout://a/test://static-binary' });
    expect(binary.contents).toEqual([
      { uri: 'loadout://a/test://static-binary', mimeType: 'image/png', blob: PNG, _meta: { fixture: true } },
    ]);
    const direct = await withDirectEverything((client) => client.readResource({ uri: 'demo://resource/static/document/architecture.md' }));
    expect(await first.client.readResource({ uri: 'demo://resource/static/document/architecture.md' })).toEqual(direct);
  });

  it('lists templates and reads a URI no list names by matching the owning server template', async () => {
    const { resourceTemplates } = await first.client.listResourceTemplates();
    const templates = resourceTemplates.map((template) => template.uriTemplate);
    expect(templates).toEqual(
      expect.arrayContaining([
        'demo://resource/dynamic/text/{resourceId}',
        'loadout://a/test://template/{id}/data',
        'loadout://b/test://template/{id}/data',
      ]),
    );
    const read = await first.client.readResource({ uri: 'loadout://b/test://template/123/data' });
    expect(read.contents).toEqual([
      {
        uri: 'loadout://b/test://template/123/data',
        mimeType: 'application/json',
        text: JSON.stringify({ id: '123', templateTest: true, data: 'Data for ID: 123' }),
      },
    ]);
    const dynamic = await first.client.readResource({ uri: 'demo://resource/dynamic/text/3' });
    expect(dynamic.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/text/3', mimeType: 'text/plain' });
  });

  it('answers an unknown URI with the spec resource-not-found error (-32602)', async () => {
    const error = await errorOf(first.client.readResource({ uri: 'nowhere://nothing' }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('nowhere://nothing');
  });

  it('sends completion/complete to the owning server and returns its answer unchanged', async () => {
    const prompt = await first.client.complete({
      ref: { type: 'ref/prompt', name: 'a_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'par' },
    });
    expect(prompt.completion).toEqual({ values: ['paris', 'park', 'party'], total: 3, hasMore: false });
    const template = await first.client.complete({
      ref: { type: 'ref/resource', uri: 'loadout://b/test://template/{id}/data' },
      argument: { name: 'id', value: '12' },
    });
    // The fixture echoes the template it was asked about: its own, not the prefixed one.
    expect(template.completion).toEqual({
      values: ['123', '124'],
      total: 2,
      hasMore: false,
      _meta: { template: 'test://template/{id}/data' },
    });
  });

  it('delivers resources/updated only for subscribed URIs, with the client-facing URI', async () => {
    await first.client.subscribeResource({ uri: 'loadout://a/test://watched-resource' });
    await first.client.callTool({ name: 'a_touch', arguments: {} });
    const updated = await first.notifications.waitFor((n) => n.method === 'notifications/resources/updated', 10_000, 'resources/updated');
    expect(updated.params).toEqual({ uri: 'loadout://a/test://watched-resource' });
    await first.client.unsubscribeResource({ uri: 'loadout://a/test://watched-resource' });
    // The last session out unsubscribes downstream: the fixture no longer holds the subscription.
    expect(textOf(await first.client.callTool({ name: 'a_touch', arguments: {} }))).toMatch(/subscribed: $/);
    // b was never subscribed, so touching it sends nothing.
    await first.client.callTool({ name: 'b_touch', arguments: {} });
    expect(first.notifications.of('notifications/resources/updated')).toHaveLength(1);
  });

  it('forwards logging/setLevel and passes downstream log messages with logger naming the server', async () => {
    await first.client.setLoggingLevel('debug');
    // The fixture reports the level loadout forwarded to it.
    expect(textOf(await first.client.callTool({ name: 'a_log', arguments: { level: 'info', message: 'from a' } }))).toBe('level debug');
    const message = await first.notifications.waitFor(
      (n) => n.method === 'notifications/message' && n.params?.data === 'from a',
      10_000,
      'the log message',
    );
    expect(message.params).toEqual({ level: 'info', logger: 'a/fixture', data: 'from a' });
  });

  it('announces one prompts list_changed when a server adds a prompt, and lists it', async () => {
    const before = first.notifications.of('notifications/prompts/list_changed').length;
    await first.client.callTool({ name: 'b_add-prompt', arguments: {} });
    await first.notifications.waitFor(
      () => first.notifications.of('notifications/prompts/list_changed').length > before,
      10_000,
      'prompts list_changed',
    );
    expect((await first.client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('b_added_4');
    expect(first.notifications.of('notifications/prompts/list_changed')).toHaveLength(before + 1);
  });

  it.runIf(mode === 'http')('filters log messages per session level and sends resource updates only to subscribers', async () => {
    const second = await connect();
    await second.client.setLoggingLevel('error');
    await first.client.setLoggingLevel('debug');
    await second.client.subscribeResource({ uri: 'loadout://b/test://watched-resource' });
    await first.client.callTool({ name: 'b_log', arguments: { level: 'info', message: 'info only for the first' } });
    await first.notifications.waitFor((n) => n.params?.data === 'info only for the first', 10_000, 'info for the first session');
    await first.client.callTool({ name: 'b_touch', arguments: {} });
    await second.notifications.waitFor((n) => n.method === 'notifications/resources/updated', 10_000, 'the update for the subscriber');
    await first.client.callTool({ name: 'b_log', arguments: { level: 'error', message: 'error for both' } });
    await second.notifications.waitFor((n) => n.params?.data === 'error for both', 10_000, 'error for the second session');
    expect(second.notifications.of('notifications/message').map((n) => n.params?.data)).toEqual(['error for both']);
    expect(
      first.notifications.of('notifications/resources/updated').filter((n) => n.params?.uri === 'loadout://b/test://watched-resource'),
    ).toHaveLength(0);
  });
});
