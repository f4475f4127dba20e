// The files backend against the modules that own each file: what it writes is byte for byte what
// they write, and a change they make without the store is heard, with a newer revision that a
// write at the old one conflicts with; a write by another process on the same dir is heard too.
import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema, StateStore, updateOAuthRecord, withFileLock } from '../../src/config/index.js';
import { writeDefinitionCache } from '../../src/catalog/index.js';
import { LearnedWordsStore } from '../../src/catalog/learnedWords.js';
import { recordDiscoveryOutcomes, storedDiscoveryRecords } from '../../src/runtime/index.js';
import {
  LAST_STOP_KEY,
  LEARNED_WORDS_KEY,
  REVISION_LEDGER_FILE,
  openDataDirStore,
  openFileStore,
  type TeamStore,
} from '../../src/store/index.js';
import { ToolsetStore } from '../../src/toolsets/index.js';
import { ROOT } from '../helpers/gateway.js';
import { nextChange } from '../helpers/storeBackends.js';
import { useTempDir } from '../helpers/tempDir.js';

describe('files store', () => {
  const tempDir = useTempDir('loadout-filestore-');
  const opened: TeamStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  const open = async (name: string, listen = false) => {
    const root = path.join(tempDir(), name);
    await mkdir(root, { recursive: true });
    const store = await openFileStore({ dataDir: path.join(root, 'data'), toolsetsDir: path.join(root, 'toolsets'), listen });
    opened.push(store);
    return { store, file: (name: string) => path.join(root, name) };
  };
  const json = async (file: string): Promise<unknown> => JSON.parse(await readFile(file, 'utf8'));

  it('writes each kind byte for byte as the module that owns its file writes it', async () => {
    const owners = path.join(tempDir(), 'owners');
    const owned = (name: string) => path.join(owners, name);
    const { store, file } = await open('store');
    // Files mode's runtime keeps discovery records through a store too: its own, with no ledger.
    const runtimeFiles = await openDataDirStore({ dataDir: owned('data'), toolsetsDir: owned('toolsets') });
    opened.push(runtimeFiles);

    await new ToolsetStore(owned('toolsets')).save({ name: 'dev', description: 'Dev things', tools: ['fs.read_file', 'web.get'] });
    await store.toolsets.put('dev', { name: 'dev', description: 'Dev things', tools: ['fs.read_file', 'web.get'] });

    await writeDefinitionCache(owned('data/catalog.json'), {
      fs: { discoveredAt: '2026-01-01T00:00:00.000Z', tools: [{ name: 'read_file', inputSchema: { type: 'object', z: 1, a: 2 } }] },
    });
    const cached = (await json(owned('data/catalog.json'))) as { servers: { fs: Parameters<TeamStore['catalog']['put']>[1] } };
    await store.catalog.put('fs', cached.servers.fs);

    const config = ServerConfigSchema.parse({ command: 'node', args: ['server.js'] });
    await recordDiscoveryOutcomes(storedDiscoveryRecords(runtimeFiles.discovery), { web: config }, [
      { server: 'web', ok: false, failure: { code: 'SERVER_START_FAILED', text: 'web exited' } },
    ]);
    const discovery = (await json(owned('data/discovery.json'))) as { servers: { web: Parameters<TeamStore['discovery']['put']>[1] } };
    await store.discovery.put('web', discovery.servers.web);

    await new LearnedWordsStore(owned('data/learned-words.json')).record(['fs.read_file'], ['open', 'read'], 'open read');
    await store.learnedWords.put(LEARNED_WORDS_KEY, (await json(owned('data/learned-words.json'))) as never);

    await new StateStore(owned('data/state.json')).update((state) => ({ ...state, activeToolset: 'dev' }));
    await store.equipped.put(LAST_STOP_KEY, { toolset: 'dev' });
    await store.equipped.put('0123abcd', { toolset: 'dev' });

    const tokens = { access_token: 'a-token', token_type: 'Bearer' };
    await updateOAuthRecord(owned('data/oauth/remote.json'), 'https://example.test/mcp', (record) => ({ ...record, tokens }));
    await store.oauth.put('remote', { serverUrl: 'https://example.test/mcp', tokens });

    for (const name of [
      'toolsets/dev.yaml',
      'data/catalog.json',
      'data/discovery.json',
      'data/learned-words.json',
      'data/state.json',
      'data/oauth/remote.json',
    ]) {
      expect(await readFile(file(name), 'utf8'), name).toBe(await readFile(owned(name), 'utf8'));
    }
    // As gateway/principalToolsets.ts writes a principal's set.
    expect(await readFile(file('data/principals/0123abcd.json'), 'utf8')).toBe('{"toolset":"dev"}\n');
    expect((await stat(file('data/oauth/remote.json'))).mode & 0o777).toBe(0o600);
    expect((await store.catalog.get('fs'))?.value).toEqual(cached.servers.fs);
    expect(await store.counts()).toEqual({
      catalog: 1,
      discovery: 1,
      toolsets: 1,
      equipped: 2,
      sessions: 0,
      learnedWords: 1,
      optimization: 0,
      clients: 0,
      oauth: 1,
    });
    // Files have no schema of their own to migrate (each file carries its format's version), nor anything a fleet shares.
    expect(store.fleet).toBeUndefined();
  });

  it('hears a change made without the store, at a newer revision that a write at the old one conflicts with', async () => {
    const { store, file } = await open('store', true);
    const first = await store.toolsets.put('dev', { name: 'dev', tools: ['fs.read_file'] });
    const heard = nextChange(store, (change) =>
      change.type === 'change' && change.key === 'dev' && change.revision > first ? change : undefined,
    );
    await new ToolsetStore(file('toolsets')).save({ name: 'dev', tools: ['web.get'] });
    const change = await heard;
    expect(change).toMatchObject({ kind: 'toolsets', op: 'put', missed: false });
    expect(await store.toolsets.get('dev')).toEqual({ key: 'dev', value: { name: 'dev', tools: ['web.get'] }, revision: change.revision });
    await expect(store.toolsets.put('dev', { name: 'dev', tools: [] }, { ifRevision: first })).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
  });

  it('hears a write another process made through its own files store, at the revision that process got', async () => {
    const { store, file } = await open('store', true);
    const heard = nextChange(store, (change) => (change.type === 'change' && change.key === 'web' ? change : undefined));
    // The built store, in a process of its own: it prints the revision its put returned.
    const script = `
      import { openFileStore } from ${JSON.stringify(path.join(ROOT, 'dist/src/store/index.js'))};
      const store = await openFileStore({ dataDir: process.argv[1], toolsetsDir: process.argv[2], listen: false });
      process.stdout.write(String(await store.toolsets.put('web', { name: 'web', tools: ['http.get'] })));
      await store.close();`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, file('data'), file('toolsets')]);
    expect(await heard).toEqual({ type: 'change', kind: 'toolsets', key: 'web', op: 'put', revision: Number(stdout), missed: false });
  });

  it('with revisions in memory (files mode) writes no ledger, takes no lock to read, and still refuses a write over a change made elsewhere', async () => {
    const root = path.join(tempDir(), 'runtime');
    const files = () =>
      openFileStore({ dataDir: path.join(root, 'data'), toolsetsDir: path.join(root, 'toolsets'), listen: false, revisionsInMemory: true });
    const [mine, theirs] = [await files(), await files()];
    opened.push(mine, theirs);
    const first = await mine.toolsets.put('dev', { name: 'dev', tools: ['fs.read_file'] });
    expect((await mine.toolsets.get('dev'))?.revision).toBe(first);
    await theirs.toolsets.put('dev', { name: 'dev', tools: ['web.get'] });
    const seen = await mine.toolsets.get('dev');
    expect(seen).toMatchObject({ value: { tools: ['web.get'] } });
    expect(seen!.revision).toBeGreaterThan(first);
    await expect(mine.toolsets.put('dev', { name: 'dev', tools: [] }, { ifRevision: first })).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
    // A reader never waits on a writer's lock.
    const fresh = await files();
    opened.push(fresh);
    await withFileLock(path.join(root, 'toolsets', 'dev.yaml'), async () => {
      await expect(fresh.toolsets.get('dev')).resolves.toMatchObject({ value: { tools: ['web.get'] } });
    });
    await expect(stat(path.join(root, 'data', REVISION_LEDGER_FILE))).rejects.toThrow(/ENOENT/);
  });

  it('passes over a file edited into nonsense and still hears the others', async () => {
    const { store, file } = await open('store', true);
    await mkdir(file('toolsets'), { recursive: true });
    const heard = nextChange(store, (change) => (change.type === 'change' && change.key === 'good' ? change : undefined));
    await writeFile(file('toolsets/bad.yaml'), 'name: [unclosed\n');
    await writeFile(file('toolsets/good.yaml'), 'name: good\ntools:\n  - fs.read_file\n');
    expect(await heard).toMatchObject({ kind: 'toolsets', op: 'put' });
    await expect(store.toolsets.get('bad')).rejects.toThrow(/bad\.yaml:\d+:\d+: /);
  });

  it('reads a learned-words.json that is not one as none, as loadout always has, and a learn replaces it at a revision that reads back', async () => {
    const { store, file } = await open('store');
    await mkdir(file('data'), { recursive: true });
    for (const text of ['{ not json', '{"version":1,"tools":{"a.tool":{"word":"strong"}}}\n']) {
      await writeFile(file('data/learned-words.json'), text);
      expect(await store.learnedWords.get(LEARNED_WORDS_KEY)).toBeUndefined();
    }
    const words = { version: 1 as const, tools: { 'a.tool': { word: [1, 0] as [number, number] } } };
    const written = await store.learnedWords.update(LEARNED_WORDS_KEY, (current) => current ?? words);
    expect(written).toEqual({ key: LEARNED_WORDS_KEY, value: words, revision: expect.any(Number) as number });
    expect(await store.learnedWords.get(LEARNED_WORDS_KEY)).toEqual(written);
    expect(await json(file('data/learned-words.json'))).toEqual(words);
  });

  it("writes a server's optimization data into state.json as StateStore does, at a revision that reads back without a read after the write", async () => {
    const { store, file } = await open('store');
    const owned = path.join(tempDir(), 'owned-state', 'state.json');
    const data = {
      canonical: { echo: { description: 'Echo a message', inputSchema: { type: 'object' } } },
      candidates: [],
      prompts: [],
      runs: [],
      promotions: {},
    };
    await new StateStore(owned).update((state) => ({ ...state, optimization: { servers: { echo: data } } }));
    const written = await store.optimization.update('echo', () => data);
    expect(await readFile(file('data/state.json'), 'utf8')).toBe(await readFile(owned, 'utf8'));
    expect(await store.optimization.get('echo')).toEqual(written);
    expect(await store.optimization.list()).toEqual([written]);
  });

  it('lists a toolset file edited into nonsense as unreadable, with its file and why, and still lists the others', async () => {
    const { store, file } = await open('store');
    await store.toolsets.put('good', { name: 'good', tools: ['fs.read_file'] });
    await writeFile(file('toolsets/bad.yaml'), 'name: [unclosed\n');
    const listed = await store.toolsets.listEach();
    expect(listed).toEqual([
      {
        kind: 'unreadable',
        key: 'bad',
        where: file('toolsets/bad.yaml'),
        failure: expect.objectContaining({ code: 'TOOLSET_INVALID' }) as Error,
      },
      { kind: 'ok', record: { key: 'good', value: { name: 'good', tools: ['fs.read_file'] }, revision: expect.any(Number) as number } },
    ]);
    await expect(store.toolsets.list()).rejects.toThrow(/bad\.yaml:\d+:\d+: /);
    // A put replaces it, as a save always has.
    await store.toolsets.put('bad', { name: 'bad', tools: [] });
    expect((await store.toolsets.listEach()).map((record) => record.kind)).toEqual(['ok', 'ok']);
  });

  it('keeps the last stop in state.json beside the optimization data, and a read-only store writes nothing', async () => {
    const { store, file } = await open('store');
    await store.equipped.put(LAST_STOP_KEY, { toolset: 'dev' });
    expect(await json(file('data/state.json'))).toMatchObject({ version: 1, activeToolset: 'dev', optimization: { servers: {} } });
    const readOnly = await openFileStore({ dataDir: file('data'), toolsetsDir: file('toolsets'), listen: false, readOnly: true });
    opened.push(readOnly);
    expect((await readOnly.equipped.get(LAST_STOP_KEY))?.value).toEqual({ toolset: 'dev' });
    await expect(readOnly.equipped.put('p1', { toolset: null })).rejects.toThrow(/opened read-only/);
    await expect(stat(file('data/principals'))).rejects.toThrow(/ENOENT/);
  });

  it('reads a data dir read-only without taking any file lock: a writer holding one does not hold it up', async () => {
    const owners = path.join(tempDir(), 'plain');
    // A data dir written by loadout itself, never through a store: no revision ledger.
    await new ToolsetStore(path.join(owners, 'toolsets')).save({ name: 'dev', tools: ['fs.read_file'] });
    const readOnly = await openFileStore({
      dataDir: path.join(owners, 'data'),
      toolsetsDir: path.join(owners, 'toolsets'),
      listen: false,
      readOnly: true,
    });
    opened.push(readOnly);
    let release!: () => void;
    let taken!: () => void;
    const lockTaken = new Promise<void>((resolve) => (taken = resolve));
    const held = withFileLock(path.join(owners, 'toolsets', 'dev.yaml'), () => {
      taken();
      return new Promise<void>((resolve) => (release = resolve));
    });
    // The read must start while the writer truly holds the lock, or the test proves nothing.
    await lockTaken;
    let waited: NodeJS.Timeout | undefined;
    try {
      const read = await Promise.race([
        readOnly.toolsets.list(),
        new Promise<'waited'>((resolve) => (waited = setTimeout(() => resolve('waited'), 2000))),
      ]);
      expect(read).toEqual([{ key: 'dev', value: { name: 'dev', tools: ['fs.read_file'] }, revision: 0 }]);
    } finally {
      clearTimeout(waited);
      release();
      await held;
    }
  });
});
