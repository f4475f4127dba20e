// The one-shot commands in store mode (`--store` / LOADOUT_STORE_URL): refresh, toolset, list,
// status and search read and write the team store, never the data dir's state files, and never
// write servers.yaml. What one replica learns is kept there too, and heard by the others.
import type { Client } from '@modelcontextprotocol/client';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linesOf, mutableServer, runCli } from '../helpers/cli.js';
import { eventually, fixture, makeTempDirs, nodeServer, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectModernClient, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

describe('one-shot commands in store mode', () => {
  const databaseUrl = usePostgresDatabase();
  let dirs: TempDirs;

  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(() => dirs.cleanup());

  it('refresh, toolset, list, status and search keep state in the store and leave servers.yaml as written', async () => {
    const file = await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const written = await readFile(file, 'utf8');
    const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
    const loadout = async (...args: string[]) => {
      const run = await runCli(dirs, args, { env });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout;
    };

    expect(await loadout('refresh')).toContain('echo');
    expect(await loadout('list', '--json')).toContain('echo.echo');
    expect(JSON.parse(await loadout('status', '--json'))).toMatchObject({ servers: [expect.objectContaining({ name: 'echo' })] });
    expect(await loadout('search', 'echo the text back')).toContain('echo.echo');

    await loadout('toolset', 'create', 'talk', 'echo.echo');
    await loadout('toolset', 'equip', 'talk');
    const listed = JSON.parse(await loadout('toolset', 'list', '--json')) as { remembered: string; toolsets: Array<{ name: string }> };
    expect(listed.remembered).toBe('talk');
    expect(listed.toolsets.map((toolset) => toolset.name)).toEqual(['talk']);
    expect(await loadout('toolset', 'delete', 'talk')).toContain('it will no longer be equipped at start');
    expect(JSON.parse(await loadout('toolset', 'list', '--json'))).toMatchObject({ remembered: null, toolsets: [] });

    expect(await readFile(file, 'utf8')).toBe(written);
    expect(await readdir(dirs.configDir)).not.toContain('toolsets');
    const dataFiles = await readdir(dirs.dataDir);
    for (const stateFile of ['catalog.json', 'state.json', 'learned-words.json']) expect(dataFiles).not.toContain(stateFile);
  });

  it('a failed discovery recorded through one data dir shows in status run with another, and no discovery.json is written', async () => {
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] },
    });
    const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
    const elsewhere = { ...dirs, dataDir: path.join(dirs.root, 'data-b') };
    const refreshed = await runCli(dirs, ['refresh'], { env });
    expect(refreshed.stderr).toContain('broken');

    const status = await runCli(elsewhere, ['status', '--json'], { env });
    expect(status.code, status.stderr).toBe(1);
    const servers = (JSON.parse(status.stdout) as { servers: Array<{ name: string; discovery: unknown }> }).servers;
    expect(servers.find((server) => server.name === 'broken')?.discovery).toMatchObject({ state: 'failed', failures: 1 });
    expect(servers.find((server) => server.name === 'echo')?.discovery).toBeNull();
    for (const dataDir of [dirs.dataDir, elsewhere.dataDir]) {
      expect(await readdir(dataDir).catch(() => [])).not.toContain('discovery.json');
    }
  });

  describe('two replicas', () => {
    const replicas: ListeningProcess[] = [];
    const clients: Client[] = [];
    afterEach(async () => {
      await Promise.allSettled(clients.splice(0).map((client) => client.close()));
      await Promise.allSettled(replicas.splice(0).map((replica) => replica.close()));
    });

    // Each replica has a data dir of its own, as on two machines.
    const startReplica = async (name: string): Promise<Client> => {
      const dataDir = path.join(dirs.root, name);
      const replica = await startHttpGateway({ configDir: dirs.configDir, dataDir }, ['--store', databaseUrl()], {
        LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
      });
      replicas.push(replica);
      const client = await connectModernClient(replica.url);
      clients.push(client);
      return client;
    };

    it('a search choice learned through replica A ranks first on replica B, and no learned-words.json is written', async () => {
      const notes = [
        { name: 'archive_note', description: 'Move a note to the archive.' },
        { name: 'delete_note', description: 'Delete a note.' },
        { name: 'store_item', description: 'Keep an item in the store.' },
      ];
      await writeServersYaml(dirs.configDir, { notes: await mutableServer(dirs.root, 'notes', notes) });
      const query = { query: 'zebra protocol for the quarterly memo' };
      const [a, b] = [await startReplica('data-a'), await startReplica('data-b')];
      const firstOn = async (client: Client) => linesOf(textOf(await client.callTool({ name: 'discover-all-tools', arguments: query })))[1];
      expect(await firstOn(a)).not.toMatch(/notes\.archive_note/);
      // B has read what is learned (nothing) before A learns: only the change notice can tell it more.
      expect(await firstOn(b)).not.toMatch(/notes\.archive_note/);

      const built = await a.callTool({ name: 'build-toolset', arguments: { name: 'memo', tools: ['notes.archive_note'], equip: true } });
      expect(built.isError, textOf(built)).toBeFalsy();
      let first = '';
      await eventually(
        async () => /^(\* )?notes\.archive_note — /.test((first = (await firstOn(b)) ?? '')),
        10_000,
        'replica B to rank the learned tool first',
      );
      expect(first).toMatch(/^(\* )?notes\.archive_note — Move a note to the archive\./);
      for (const name of ['data-a', 'data-b']) expect(await readdir(path.join(dirs.root, name))).not.toContain('learned-words.json');
    });

    it('a candidate proposed through one data dir, promoted through another, is live on a running replica; no state.json is written', async () => {
      await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
      const replica = await startReplica('data-r');
      const echoLine = async () =>
        linesOf(textOf(await replica.callTool({ name: 'discover-all-tools', arguments: { query: 'echo the text back' } }))).find((line) =>
          line.startsWith('echo.echo — '),
        );
      expect(await echoLine()).toMatch(/^echo\.echo — Return the given text unchanged\./);

      const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
      const loadout = async (dataDir: string, ...args: string[]) => {
        const run = await runCli({ ...dirs, dataDir: path.join(dirs.root, dataDir) }, args, { env });
        expect(run.code, run.stderr).toBe(0);
        return run.stdout;
      };
      const description = 'Repeat the given text back to the caller, word for word.';
      const { candidateId } = JSON.parse(await loadout('data-a', 'optimize', 'propose', 'echo', 'echo', description)) as {
        candidateId: string;
      };
      expect(await loadout('data-b', 'optimize', 'promote', 'echo', 'echo', candidateId, '--force')).toContain(`Promoted ${candidateId}`);
      expect(await loadout('data-c', 'optimize', 'results', 'echo', '--json')).toContain(candidateId);

      let line: string | undefined;
      await eventually(async () => (line = await echoLine())?.includes('word for word') ?? false, 10_000, 'the promotion on the replica');
      expect(line).toBe(`echo.echo — ${description} (params: text)`);
      for (const name of ['data-a', 'data-b', 'data-c', 'data-r']) {
        expect(await readdir(path.join(dirs.root, name)).catch(() => [])).not.toContain('state.json');
      }
    });
  });
});
