// A server's prompts list_changed that arrives while loadout is still listing that server (the
// re-check every start runs) is not folded into that listing, whose prompts/list may have been
// answered before the change: one more re-check follows it, and the client hears the change.
import { describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, useGatewaySandbox, useInProcessGateway, writeServersYaml } from '../helpers/gateway.js';
import { collectNotifications } from '../helpers/notifications.js';

describe('a change announced while loadout lists the server', () => {
  const sandbox = useGatewaySandbox();

  it('is listed by a re-check after the one under way, and announced to the client', async () => {
    // The server adds a prompt and announces it while answering the first templates list of each of its processes.
    await writeServersYaml(sandbox.dirs.configDir, {
      test: nodeServer(fixture('contentServer'), { env: { ADD_PROMPT_WHILE_LISTED: '1' } }),
    });
    const { client } = await sandbox.start({ args: ['--equip', 'all'] });
    const notifications = collectNotifications(client);
    await eventually(async () => (await client.listTools()).tools.some((tool) => tool.name === 'test_pid'), 20_000, 'test discovered');

    // Discovery has stopped the lazy server; this call starts it again, and the start's re-check lists it.
    expect(Number(textOf(await client.callTool({ name: 'test_pid', arguments: {} })))).toBeGreaterThan(0);
    await notifications.waitFor(
      (notification) => notification.method === 'notifications/prompts/list_changed',
      10_000,
      'prompts list_changed',
    );
    await eventually(
      async () => (await client.listPrompts()).prompts.some((prompt) => /^test_added_\d+$/.test(prompt.name)),
      10_000,
      'the added prompt listed',
    );
  });
});

describe('a change announced at every listing of the server', () => {
  const inProcess = useInProcessGateway();

  it('costs one more listing, not an endless chain of them', async () => {
    await writeServersYaml(inProcess.dirs.configDir, {
      test: nodeServer(fixture('contentServer'), { env: { ADD_PROMPT_WHILE_LISTED: 'always' } }),
    });
    const { pool, catalog } = (await inProcess.start()).context;
    // Starting it re-checks it; its announcement during that listing schedules one more, and the one
    // during that listing shares it. An endless chain would never settle, and time the test out.
    await pool.connection('test');
    await catalog.recheck('test');
    await catalog.settled();
    const added = (catalog.current.definitionsOf('test')?.prompts ?? []).filter((prompt) => prompt.name.startsWith('added_'));
    expect(added.map((prompt) => prompt.name)).toEqual(['added_4']);
  });
});
