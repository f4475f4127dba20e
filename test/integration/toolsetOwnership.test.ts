// Saved toolsets belong to the principal who saved them: with two static tokens (and an OpenID
// provider's subjects), one caller's toolsets, and what it equipped last, never reach another
// caller's lists, equips, deletes, 404s or new sessions, in either era (2025 sessions,
// 2026-07-28 requests), in files mode and on a team store. Hand-written toolsets and those a
// policy rule grants are for everyone they are meant for; without an identity nothing changes.
import type { Client } from '@modelcontextprotocol/client';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture, makeTempDirs, nodeServer, textOf, type TempDirs } from '../helpers/gateway.js';
import {
  connectHttp,
  connectModernClient,
  listedToolNames,
  postModernDiscover,
  startHttpGateway,
  type ListeningProcess,
} from '../helpers/http.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';
import { startOidcProvider } from '../fixtures/oidcProvider.js';

const SERVERS = {
  echo: nodeServer(fixture('echo')),
  files: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'files_' } }),
};
const ALICE = 'alice-token';
const BOB = 'bob-token';
/** A static token's principal id (and subject): the token's hash, as loadout keys it. */
const principalId = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 32);

type Era = 'legacy' | 'modern';
const ERAS: Era[] = ['legacy', 'modern'];

describe('saved toolsets owned by principals', () => {
  let dirs: TempDirs;
  const gateways: ListeningProcess[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  // The clients first, then the gateways they spoke to (each list emptied), then the dirs.
  const closeOpened = async (): Promise<void> => {
    for (const opened of [clients, gateways]) await Promise.allSettled(opened.splice(0).map((each) => each.close()));
  };
  afterEach(async () => {
    await closeOpened();
    await dirs.cleanup();
  });

  const writeConfig = async (extra: Record<string, unknown> = {}): Promise<void> => {
    await mkdir(path.join(dirs.configDir, 'toolsets'), { recursive: true });
    await writeFile(path.join(dirs.configDir, 'servers.yaml'), stringify({ servers: SERVERS, ...extra }));
  };
  const start = async (args: string[] = [], env: Record<string, string> = {}): Promise<ListeningProcess> => {
    const gateway = await startHttpGateway(dirs, args, env);
    gateways.push(gateway);
    return gateway;
  };
  const connect = async (url: string, token: string, era: Era): Promise<Client> => {
    if (era === 'modern') {
      const client = await connectModernClient(url, token);
      clients.push(client);
      return client;
    }
    const http = await connectHttp(url, { token });
    clients.push(http);
    return http.client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    return { text: textOf(result), isError: result.isError === true };
  };

  for (const era of ERAS) {
    it(`keeps a toolset to the principal who saved it: another lists, equips, changes and deletes none of it (${era} era)`, async () => {
      await writeConfig();
      const gateway = await start(['--token', ALICE, '--token', BOB]);
      const alice = await connect(gateway.url, ALICE, era);
      const saved = await call(alice, 'build-toolset', {
        name: 'secretonly',
        tools: ['files.files_echo', 'files.files_add'],
        description: 'Super secret set of files stuff',
      });
      expect(saved.isError, saved.text).toBe(false);
      expect((await call(alice, 'build-toolset', { name: 'alicenotes', tools: ['echo.echo'] })).isError).toBe(false);
      expect((await call(alice, 'list-saved-toolsets')).text).toContain('secretonly (2 tools) — Super secret set of files stuff');

      const bob = await connect(gateway.url, BOB, era);
      const listed = await call(bob, 'list-saved-toolsets');
      expect(listed.text).toContain('No saved toolsets yet');
      const equip = await call(bob, 'equip-toolset', { name: 'secretonly' });
      expect(equip.isError).toBe(true);
      const deleted = await call(bob, 'delete-toolset', { name: 'secretonly' });
      expect(deleted.isError).toBe(true);
      const overwritten = await call(bob, 'build-toolset', { name: 'secretonly', tools: ['echo.echo'] });
      expect(overwritten.isError).toBe(true);
      expect(await listedToolNames(bob)).not.toContain('files_files_echo');
      // Nothing Bob was told names Alice's other toolset, or what hers hold.
      for (const text of [listed.text, equip.text, deleted.text, overwritten.text]) {
        expect(text).not.toMatch(/alicenotes|Super secret|files_/);
      }
      // A toolset endpoint of another's toolset, or of none, is a 404 that lists none of Alice's.
      for (const name of ['secretonly', 'nope']) {
        const response = await postModernDiscover(gateway.url.replace(/\/mcp$/, `/mcp/toolsets/${name}`), {
          Authorization: `Bearer ${BOB}`,
        });
        expect(response.status).toBe(404);
        expect(await response.text()).not.toMatch(/alicenotes|secretonly, /);
      }
      // Alice's own is still hers, whole.
      const file = await readFile(path.join(dirs.configDir, 'toolsets', 'secretonly.yaml'), 'utf8');
      expect(file).toContain(`owner:\n  id: ${principalId(ALICE)}\n`);
      expect((await call(alice, 'equip-toolset', { name: 'secretonly' })).text).toContain('files_files_echo');
    });

    it(`starts a principal's new session with its own last equip, never another's (${era} era equips)`, async () => {
      await writeConfig();
      await writeFile(path.join(dirs.configDir, 'toolsets', 'team.yaml'), stringify({ name: 'team', tools: ['echo.echo'] }));
      const gateway = await start(['--token', ALICE, '--token', BOB]);
      const alice = await connect(gateway.url, ALICE, era);
      expect((await call(alice, 'equip-toolset', { name: 'team' })).isError).toBe(false);

      // Bob's first request of either era, and a new session of his, come up with nothing equipped.
      for (const bobEra of ['modern', 'legacy'] as const) {
        const bob = await connect(gateway.url, BOB, bobEra);
        expect(await listedToolNames(bob), `Bob's ${bobEra} client`).not.toContain('echo_echo');
      }
      // Alice's own new client of the era she equipped in starts with it: her last stop (2025), her record (2026-07-28).
      expect(await listedToolNames(await connect(gateway.url, ALICE, era))).toContain('echo_echo');
    });
  }

  it('shares hand-written toolsets and those a policy rule grants, counting only the tools the caller may use', async () => {
    const bobId = principalId(BOB);
    await writeConfig({
      policy: {
        rules: [
          { everyone: true, servers: ['echo'] },
          { subjects: [principalId(ALICE)], servers: ['files'] },
          { subjects: [bobId], toolsets: ['review'] },
        ],
      },
    });
    // Hand-written, for everyone: one of its tools is Alice's server, which Bob is not granted.
    await writeFile(
      path.join(dirs.configDir, 'toolsets', 'team.yaml'),
      stringify({ name: 'team', tools: ['echo.echo', 'files.files_echo'] }),
    );
    const gateway = await start(['--token', ALICE, '--token', BOB]);
    const alice = await connect(gateway.url, ALICE, 'legacy');
    expect((await call(alice, 'build-toolset', { name: 'review', tools: ['echo.add', 'files.files_add'] })).isError).toBe(false);
    expect((await call(alice, 'build-toolset', { name: 'private', tools: ['echo.echo'] })).isError).toBe(false);

    const bob = await connect(gateway.url, BOB, 'modern');
    const listed = (await call(bob, 'list-saved-toolsets')).text;
    expect(listed).toContain('review (1 tool)');
    expect(listed).toContain('team (1 tool)');
    expect(listed).not.toContain('private');
    const equipped = await call(bob, 'equip-toolset', { name: 'review' });
    expect(equipped.text).toContain('echo_add');
    expect(equipped.text).not.toContain('files');
    expect((await call(bob, 'get-active-toolset')).text).not.toContain('files');
    // Granted to use, not to change: only Alice changes or deletes it; the hand-written one is the operator's.
    expect((await call(bob, 'delete-toolset', { name: 'review' })).isError).toBe(true);
    expect((await call(bob, 'delete-toolset', { name: 'team' })).isError).toBe(true);
    expect((await call(alice, 'delete-toolset', { name: 'team' })).isError).toBe(true);
    expect((await call(alice, 'delete-toolset', { name: 'review' })).isError).toBe(false);
  });

  it("starts Bob's first 2026-07-28 request without Alice's last equip, with an OpenID provider's tokens", async () => {
    const idp = await startOidcProvider();
    try {
      await writeConfig({ auth: { issuer: idp.issuer, scopes: ['mcp:tools'] } });
      await writeFile(path.join(dirs.configDir, 'toolsets', 'team.yaml'), stringify({ name: 'team', tools: ['echo.echo'] }));
      const gateway = await start();
      const token = (sub: string) => idp.signToken({ sub, aud: gateway.url, scope: 'mcp:tools' });
      const alice = await connect(gateway.url, await token('alice'), 'legacy');
      expect((await call(alice, 'equip-toolset', { name: 'team' })).isError).toBe(false);
      const bob = await connect(gateway.url, await token('bob'), 'modern');
      expect(await listedToolNames(bob)).not.toContain('echo_echo');
      expect(await listedToolNames(await connect(gateway.url, await token('alice'), 'modern'))).toContain('echo_echo');
    } finally {
      await idp.close();
    }
  });

  it('changes nothing without an identity: every HTTP caller shares the toolsets and the last stop', async () => {
    await writeConfig();
    const gateway = await start();
    const first = await connect(gateway.url, '', 'legacy');
    expect((await call(first, 'build-toolset', { name: 'talk', tools: ['echo.echo'], equip: true })).isError).toBe(false);
    expect(await readFile(path.join(dirs.configDir, 'toolsets', 'talk.yaml'), 'utf8')).not.toContain('owner');
    const second = await connect(gateway.url, '', 'modern');
    expect(await listedToolNames(second)).toContain('echo_echo');
    expect((await call(second, 'list-saved-toolsets')).text).toContain('talk (1 tool)');
  });

  describe('on a team store', () => {
    let database: Awaited<ReturnType<typeof createDatabase>>;
    beforeEach(async () => {
      database = await createDatabase(postgresServerUrl());
    });
    afterEach(async () => {
      // The replicas end before their database is dropped.
      await closeOpened();
      await database.drop();
    });
    const env = () => ({ LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: database.url });

    it("keeps each principal's toolsets and last stop its own across replicas, and the operator lists them all with owners", async () => {
      await writeConfig();
      const replicas = await Promise.all(
        [0, 1].map((index) =>
          startHttpGateway(
            { configDir: dirs.configDir, dataDir: path.join(dirs.root, `data-${index}`) },
            ['--token', ALICE, '--token', BOB],
            env(),
          ),
        ),
      );
      gateways.push(...replicas);
      const [one, two] = replicas.map((replica) => replica.url) as [string, string];
      const alice = await connect(one, ALICE, 'legacy');
      expect((await call(alice, 'build-toolset', { name: 'secretonly', tools: ['files.files_echo'], equip: true })).isError).toBe(false);

      for (const era of ERAS) {
        const bob = await connect(two, BOB, era);
        expect(await listedToolNames(bob), `Bob's ${era} client`).not.toContain('files_files_echo');
        expect((await call(bob, 'list-saved-toolsets')).text).not.toContain('secretonly');
        expect((await call(bob, 'equip-toolset', { name: 'secretonly' })).isError).toBe(true);
      }
      // Alice's new session on the other replica starts with her equip.
      expect(await listedToolNames(await connect(two, ALICE, 'legacy'))).toContain('files_files_echo');

      const cli = async (...args: string[]): Promise<string> => {
        const run = await runCli(dirs, args, { env: env() });
        expect(run.code, run.stderr).toBe(0);
        return run.stdout + run.stderr;
      };
      expect(await cli('toolset', 'list')).toContain('1 toolset saved by callers not shown; --all lists them');
      const all = await cli('toolset', 'list', '--all');
      expect(all).toContain('secretonly');
      expect(all).toContain(`token ${principalId(ALICE)}`);
      const json = JSON.parse(await cli('toolset', 'list', '--all', '--json')) as {
        toolsets: Array<{ name: string; owner?: { id: string } }>;
      };
      expect(json.toolsets).toEqual([
        expect.objectContaining({ name: 'secretonly', owner: expect.objectContaining({ id: principalId(ALICE) }) }),
      ]);
    });
  });
});
