// A policy edit that takes servers away from a principal reaches what that principal already had
// running, over HTTP with two static tokens: its resource subscriptions end (2025
// resources/subscribe and 2026-07-28 listen streams alike) while another principal's go on, its
// unsubscribe succeeds, its tasks become unknown ids, and a 2025 session is told in a warning. A
// token naming fewer groups than the principal's sessions were opened with revokes the same way.
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { stringify } from 'yaml';
import * as z from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { THIRD_PARTY, eventually, fixture, makeTempDirs, nodeServer, textOf, type TempDirs } from '../helpers/gateway.js';
import { connectHttp, connectModernClient, listedToolNames, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { collectNotifications } from '../helpers/notifications.js';
import { startOidcProvider } from '../fixtures/oidcProvider.js';

const SERVERS = { content: nodeServer(fixture('contentServer')), everything: nodeServer(THIRD_PARTY.everything) };
const ALICE = 'alice-token';
const BOB = 'bob-token';
const principalId = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 32);
const URI = 'test://watched-resource';
const TASK_TOOL = 'everything_simulate-research-query';
const Loose = z.looseObject({});

function raw(client: Client, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  return client.request({ method, params }, Loose, { timeout: 60_000 });
}

describe('a policy edit that revokes servers', () => {
  let dirs: TempDirs;
  let gateway: ListeningProcess | undefined;
  const clients: Array<{ close(): Promise<void> }> = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    await gateway?.close();
    await dirs.cleanup();
  });

  // Both servers to `subjects`' principals.
  const grant = (tokens: string[]): Promise<void> =>
    writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      stringify({ servers: SERVERS, policy: { rules: [{ subjects: tokens.map(principalId), servers: ['content', 'everything'] }] } }),
    );
  const start = async (): Promise<ListeningProcess> => {
    await grant([ALICE, BOB]);
    gateway = await startHttpGateway(dirs, ['--token', ALICE, '--token', BOB, '--equip', 'all']);
    return gateway;
  };
  const touch = async (client: Client): Promise<string> => textOf(await client.callTool({ name: 'content_touch', arguments: {} }));
  const discovered = (client: Client): Promise<void> =>
    eventually(async () => (await listedToolNames(client)).includes('content_touch'), 30_000, 'content discovered');

  it('ends 2025 subscriptions and hides tasks, says so in a warning, and lets the unsubscribe succeed', async () => {
    const { url } = await start();
    const alice = await connectHttp(url, { token: ALICE });
    const bob = await connectHttp(url, { token: BOB });
    clients.push(alice, bob);
    const aliceHeard = collectNotifications(alice.client);
    const bobHeard = collectNotifications(bob.client);
    const updates = (heard: typeof aliceHeard): number => heard.of('notifications/resources/updated').length;
    await discovered(bob.client);
    await alice.client.subscribeResource({ uri: URI });
    await bob.client.subscribeResource({ uri: URI });
    const created = await raw(bob.client, 'tools/call', { name: TASK_TOOL, arguments: { topic: 'revocation' }, task: { ttl: 60_000 } });
    const taskId = (created.task as { taskId: string }).taskId;
    expect(await raw(bob.client, 'tasks/get', { taskId })).toMatchObject({ taskId });
    // Both hear an update while both are granted: the channel works.
    expect(await touch(alice.client)).toContain(URI);
    await aliceHeard.waitFor((n) => n.method === 'notifications/resources/updated', 10_000, "Alice's first update");
    await bobHeard.waitFor((n) => n.method === 'notifications/resources/updated', 10_000, "Bob's first update");

    await grant([ALICE]);
    const warning = await bobHeard.waitFor(
      (n) => n.method === 'notifications/message' && n.params?.level === 'warning' && n.params.logger === 'loadout',
      15_000,
      "Bob's revocation warning",
    );
    expect(warning.params?.data).toMatchObject({
      resources: [URI],
      tasks: [{ taskId, tool: 'everything.simulate-research-query' }],
    });
    expect(String((warning.params?.data as { message: string }).message)).toContain(URI);

    // The server still sends updates (Alice hears hers); Bob's subscription is over.
    await touch(alice.client);
    await eventually(() => updates(aliceHeard) === 2, 10_000, "Alice's second update");
    expect(updates(bobHeard)).toBe(1);
    await expect(bob.client.unsubscribeResource({ uri: URI })).resolves.toEqual({});
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const refused = await raw(bob.client, method, { taskId }).catch((error: unknown) => error);
      expect(refused, method).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).message, method).toContain('not found in this session');
    }
    expect((await raw(bob.client, 'tasks/list', {})).tasks).toEqual([]);
    // Alice, still granted, was told nothing; her unsubscribe is the last, and ends the downstream one.
    expect(aliceHeard.of('notifications/message').filter((n) => n.params?.logger === 'loadout')).toEqual([]);
    await alice.client.unsubscribeResource({ uri: URI });
    await eventually(async () => (await touch(alice.client)).endsWith('subscribed: '), 10_000, 'the downstream unsubscribe');
  });

  it('ends 2026-07-28 listen-stream subscriptions, and the stream closes quietly', async () => {
    const { url } = await start();
    const alice = await connectModernClient(url, ALICE);
    const bob = await connectModernClient(url, BOB);
    clients.push(alice, bob);
    const heard = { alice: [] as string[], bob: [] as string[] };
    alice.setNotificationHandler('notifications/resources/updated', (n) => void heard.alice.push(n.params.uri));
    bob.setNotificationHandler('notifications/resources/updated', (n) => void heard.bob.push(n.params.uri));
    await discovered(bob);
    const aliceStream = await alice.listen({ resourceSubscriptions: [URI] });
    const bobStream = await bob.listen({ resourceSubscriptions: [URI] });
    // Both hear an update while both are granted (touched until both subscriptions are in place).
    await eventually(
      async () => {
        await touch(alice);
        return heard.alice.length > 0 && heard.bob.length > 0;
      },
      10_000,
      'both first updates',
    );

    await grant([ALICE]);
    await eventually(async () => !(await listedToolNames(bob)).includes('content_touch'), 15_000, 'the policy applied to Bob');
    const [aliceBefore, bobBefore] = [heard.alice.length, heard.bob.length];
    await touch(alice);
    await eventually(() => heard.alice.length > aliceBefore, 10_000, "Alice's next update");
    expect(heard.bob.length).toBe(bobBefore);

    // Bob's stream ends with nothing left to release; Alice's, the last holder's, ends the downstream one.
    await bobStream.close();
    await aliceStream.close();
    await eventually(async () => (await touch(alice)).endsWith('subscribed: '), 10_000, 'the downstream unsubscribe');
    expect(gateway!.output()).not.toContain('could not change a subscription a listen stream asked for');
  });

  it("revokes what a principal's groups no longer grant once a token names fewer", async () => {
    const idp = await startOidcProvider();
    clients.push(idp);
    await writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      stringify({ servers: SERVERS, auth: { issuer: idp.issuer }, policy: { rules: [{ groups: ['eng'], servers: ['content'] }] } }),
    );
    gateway = await startHttpGateway(dirs, ['--equip', 'all']);
    const { url } = gateway;
    const token = (sub: string, groups: string[]): Promise<string> => idp.signToken({ sub, aud: url, groups });
    // Carol's client sends whatever token it holds now (the transport reads its headers on each request).
    const headers = { Authorization: `Bearer ${await token('carol', ['eng'])}` };
    const carol = new Client({ name: 'carol', version: '1' });
    await carol.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    const dave = await connectHttp(url, { token: await token('dave', ['eng']) });
    clients.push(carol, dave);
    const carolHeard = collectNotifications(carol);
    const daveHeard = collectNotifications(dave.client);
    await discovered(carol);
    await carol.subscribeResource({ uri: URI });
    await dave.client.subscribeResource({ uri: URI });

    // Carol left group eng: her next token says so, and her running session loses what eng granted.
    headers.Authorization = `Bearer ${await token('carol', [])}`;
    expect(await listedToolNames(carol)).not.toContain('content_touch');
    const warning = await carolHeard.waitFor(
      (n) => n.method === 'notifications/message' && n.params?.level === 'warning' && n.params.logger === 'loadout',
      15_000,
      "Carol's revocation warning",
    );
    expect(warning.params?.data).toMatchObject({ resources: [URI], tasks: [] });
    await touch(dave.client);
    await daveHeard.waitFor((n) => n.method === 'notifications/resources/updated', 10_000, "Dave's update");
    expect(carolHeard.of('notifications/resources/updated')).toEqual([]);
    await expect(carol.unsubscribeResource({ uri: URI })).resolves.toEqual({});
    // A 2026-07-28 request with that token is served under the same groups.
    const modern = await connectModernClient(url, headers.Authorization.slice('Bearer '.length));
    clients.push(modern);
    expect(await listedToolNames(modern)).not.toContain('content_touch');
  });
});
