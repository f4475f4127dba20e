// The store contract, run against every backend: typed records per kind, revisions and
// conflicts, row formats from a newer loadout, encrypted OAuth records, and replicas hearing each
// other's changes (two stores = two connections), with 2 × 100 concurrent saves losing nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storedDefinitions } from '../../src/catalog/index.js';
import { LAST_STOP_KEY, type CatalogEntryRecord, type TeamStore } from '../../src/store/index.js';
import { STORE_BACKENDS, nextChange, type StoreBackend } from '../helpers/storeBackends.js';

describe.each(STORE_BACKENDS)('store contract ($name)', (backend: StoreBackend) => {
  let state: Awaited<ReturnType<StoreBackend['create']>> | undefined;
  const open: TeamStore[] = [];
  const created = () => state ?? expect.fail('the backend was not created');
  const replica = async (options?: Parameters<NonNullable<typeof state>['open']>[0]) => {
    const store = await created().open(options);
    open.push(store);
    return store;
  };
  beforeEach(async () => {
    state = undefined;
    state = await backend.create();
  });
  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map((store) => store.close()));
    await state?.drop();
  });

  it('keeps each kind typed, by key, with a revision that grows', async () => {
    const store = await replica();
    const first = await store.toolsets.put('dev', { name: 'dev', tools: ['fs.read_file'], description: 'Dev' });
    const second = await store.equipped.put(LAST_STOP_KEY, { toolset: 'dev' });
    await store.sessions.put('s1', {
      principal: 'local',
      protocolVersion: '2025-06-18',
      clientCapabilities: { sampling: {} },
      toolset: null,
      createdAt: new Date(0).toISOString(),
    });
    await store.catalog.put('fs', {
      discoveredAt: 'now',
      tools: [{ name: 'read_file', inputSchema: { type: 'object' }, z: 1, a: 2 }],
      hashes: { read_file: 'abc' },
    });
    expect(second).toBeGreaterThan(first);
    expect((await store.toolsets.get('dev'))?.value).toEqual({ name: 'dev', tools: ['fs.read_file'], description: 'Dev' });
    expect((await store.equipped.get(LAST_STOP_KEY))?.value).toEqual({ toolset: 'dev' });
    // Definitions pass through in their own key order, as catalog.json keeps them.
    expect(JSON.stringify((await store.catalog.get('fs'))?.value.tools[0])).toBe(
      '{"name":"read_file","inputSchema":{"type":"object"},"z":1,"a":2}',
    );
    expect((await store.sessions.list()).map((record) => record.key)).toEqual(['s1']);
    expect(await store.toolsets.delete('dev')).toBe(true);
    expect(await store.toolsets.delete('dev')).toBe(false);
    expect(await store.toolsets.get('dev')).toBeUndefined();
  });

  it("keeps a list failure's JSON-RPC code in a catalog record, and reads one kept as text alone (an older loadout's) as {text}", async () => {
    const store = await replica();
    const unimplemented = { text: 'prompts/list failed: Method not found (-32601)', rpcCode: -32601 };
    const definitions = storedDefinitions(store.catalog);
    await definitions.update([
      {
        server: 'new',
        change: () => ({
          discoveredAt: 'now',
          tools: [{ name: 'q', inputSchema: { type: 'object' } }],
          listFailures: { prompts: unimplemented },
        }),
      },
    ]);
    await store.catalog.put('old', {
      discoveredAt: 'now',
      tools: [{ name: 'q' }],
      listFailures: { resources: 'resources/list failed: Request timed out' },
    });
    const read = await definitions.read();
    expect(read.new?.listFailures).toEqual({ prompts: unimplemented });
    expect(read.old?.listFailures).toEqual({ resources: { text: 'resources/list failed: Request timed out' } });
  });

  it("applies a flush's changes of the cached definitions in order, several of one server built on each other", async () => {
    const store = await replica();
    const definitions = storedDefinitions(store.catalog);
    const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });
    await store.catalog.put('gone', { discoveredAt: 'then', tools: [tool('g')] });
    await definitions.update([
      { server: 'a', change: () => ({ discoveredAt: 'first', tools: [tool('one')] }) },
      { server: 'b', change: () => ({ discoveredAt: 'now', tools: [tool('b')] }) },
      { server: 'a', change: (entry) => entry && { ...entry, tools: [...entry.tools, tool('two')] } },
      { server: 'gone', change: () => undefined },
      { server: 'a', change: (entry) => entry && { ...entry, discoveredAt: 'last' } },
    ]);
    const read = await definitions.read();
    expect(Object.keys(read).sort()).toEqual(['a', 'b']);
    expect(read.a).toEqual({ discoveredAt: 'last', tools: [tool('one'), tool('two')] });
    expect((await store.catalog.get('a'))?.value.hashes).toEqual({ one: expect.any(String), two: expect.any(String) });
  });

  it('writes many records at once, each then read at a revision of its own', async () => {
    const store = await replica();
    const servers = ['a', 'b', 'c'];
    await store.catalog.putAll(
      servers.map((server) => ({ key: server, value: { discoveredAt: 'now', tools: [{ name: `${server}_tool` }] } })),
    );
    await store.equipped.putAll([
      { key: LAST_STOP_KEY, value: { toolset: 'dev' } },
      { key: '0123456789abcdef0123456789abcdef', value: { toolset: null } },
    ]);
    const catalog = await store.catalog.list();
    expect(catalog.map((record) => [record.key, record.value.tools[0]?.name])).toEqual(servers.map((server) => [server, `${server}_tool`]));
    expect(new Set(catalog.map((record) => record.revision)).size).toBe(servers.length);
    expect((await store.equipped.get(LAST_STOP_KEY))?.value).toEqual({ toolset: 'dev' });
    expect((await store.equipped.list()).map((record) => record.key).sort()).toEqual(
      ['0123456789abcdef0123456789abcdef', LAST_STOP_KEY].sort(),
    );
  });

  it('changes several records with updateAll(), each from its record as kept, and deletes one changed to nothing', async () => {
    const store = await replica();
    await store.catalog.putAll(['a', 'b'].map((server) => ({ key: server, value: { discoveredAt: 'then', tools: [{ name: server }] } })));
    const before = await store.catalog.list();
    await store.catalog.updateAll(
      new Map([
        ['a', (current?: CatalogEntryRecord) => current && { ...current, discoveredAt: 'now' }],
        ['b', () => undefined],
        ['c', (current?: CatalogEntryRecord) => current ?? { discoveredAt: 'now', tools: [{ name: 'c' }] }],
      ]),
    );
    const after = await store.catalog.list();
    expect(after.map((record) => [record.key, record.value])).toEqual([
      ['a', { discoveredAt: 'now', tools: [{ name: 'a' }] }],
      ['c', { discoveredAt: 'now', tools: [{ name: 'c' }] }],
    ]);
    expect(after[0]!.revision).toBeGreaterThan(Math.max(...before.map((record) => record.revision)));
    await expect(store.catalog.updateAll(new Map([['a', () => ({ discoveredAt: 1 }) as never]]))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect((await store.catalog.get('a'))?.value.discoveredAt).toBe('now');
  });

  it('lists each record as read, as list() does, with listEach()', async () => {
    const store = await replica();
    await store.toolsets.put('dev', { name: 'dev', tools: ['fs.read_file'] });
    await store.sessions.put('s1', {
      principal: 'local',
      protocolVersion: '2025-06-18',
      clientCapabilities: {},
      toolset: null,
      createdAt: new Date(0).toISOString(),
    });
    for (const collection of [store.toolsets, store.sessions] as const) {
      const listed = await collection.listEach();
      expect(listed).toEqual((await collection.list()).map((record) => ({ kind: 'ok', record })));
      expect(listed).toHaveLength(1);
    }
  });

  it('refuses an invalid record with one line and writes nothing', async () => {
    const store = await replica();
    await expect(store.toolsets.put('Bad Name', { name: 'Bad Name', tools: [] })).rejects.toThrow(
      /toolsets 'Bad Name' not saved: .*toolset names/,
    );
    expect(await store.toolsets.list()).toEqual([]);
  });

  it('writes only at the expected revision, and update() retries a concurrent write', async () => {
    const store = await replica();
    const revision = await store.toolsets.put('dev', { name: 'dev', tools: [] }, { ifRevision: null });
    await expect(store.toolsets.put('dev', { name: 'dev', tools: [] }, { ifRevision: null })).rejects.toThrow(/changed by another writer/);
    await store.toolsets.put('dev', { name: 'dev', tools: ['a.b'] }, { ifRevision: revision });
    await expect(store.toolsets.put('dev', { name: 'dev', tools: [] }, { ifRevision: revision })).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.toolsets.update('dev', (current) => ({ name: 'dev', tools: [...(current?.tools ?? []), `s.t${i}`] })),
      ),
    );
    expect((await store.toolsets.get('dev'))?.value.tools).toHaveLength(21);
  });

  it('refuses a record written by a newer loadout instead of misreading it', async () => {
    const store = await replica();
    await store.toolsets.put('dev', { name: 'dev', tools: [] });
    await created().writeNewerToolset('dev');
    const refused = await store.toolsets.get('dev').then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(backend.newerRecordError);
  });

  it(
    backend.sealsOAuth
      ? 'keeps OAuth tokens encrypted at rest; another key reads them as unreadable, per server, and never overwrites them'
      : 'keeps OAuth tokens unencrypted in a 0600 file per server, as files mode always has (encryption at rest is Postgres only)',
    async () => {
      const store = await replica();
      await store.oauth.put('github', { serverUrl: 'https://example.test/mcp', tokens: { access_token: 'secret-access-token' } });
      const read = await store.oauth.get('github');
      expect(read).toMatchObject({ state: 'readable', value: { tokens: { access_token: 'secret-access-token' } } });
      const atRest = await created().oauthAtRest('github');
      if (backend.sealsOAuth) {
        expect(atRest.bytes).not.toContain('secret-access-token');
        const wrongKey = await replica({ secretKey: 'another-secret-key-0123456789abcdefghijkl', listen: false });
        const unreadable = await wrongKey.oauth.get('github');
        expect(unreadable).toMatchObject({ state: 'unreadable' });
        expect(unreadable?.state === 'unreadable' && unreadable.reason).toMatch(
          /^the stored tokens of 'github' are sealed with another LOADOUT_SECRET_KEY \(key id \w+; this loadout's is \w+\)/,
        );
        await expect(wrongKey.oauth.put('github', { serverUrl: 'https://example.test/mcp' })).rejects.toThrow(/were not overwritten/);
        await expect(wrongKey.oauth.update('github', () => ({ serverUrl: 'x' }))).rejects.toMatchObject({ code: 'STORE_SECRET_KEY' });
        expect(await store.oauth.get('github')).toEqual(read);
        const noKey = await replica({ secretKey: undefined, listen: false });
        await expect(noKey.oauth.get('github')).rejects.toThrow(/LOADOUT_SECRET_KEY is not set/);
      } else {
        expect(atRest.bytes).toBe(
          `${JSON.stringify({ serverUrl: 'https://example.test/mcp', tokens: { access_token: 'secret-access-token' } }, null, 2)}\n`,
        );
        expect(atRest.mode).toBe(0o600);
      }
    },
  );

  it(
    backend.sealsOAuth
      ? 'reads a damaged OAuth record as unreadable, per server, and refuses to overwrite it'
      : 'reads a damaged OAuth file as unreadable, per server, and lets a new login replace it (as files mode always has)',
    async () => {
      const store = await replica();
      await store.oauth.put('github', { serverUrl: 'https://example.test/mcp' });
      await store.oauth.put('gitlab', { serverUrl: 'https://gitlab.test/mcp' });
      await created().damageOAuth('github');
      const [github, gitlab] = await store.oauth.list();
      expect(github).toMatchObject({ key: 'github', state: 'unreadable' });
      expect(gitlab).toMatchObject({ key: 'gitlab', state: 'readable', value: { serverUrl: 'https://gitlab.test/mcp' } });
      const login = store.oauth.put('github', { serverUrl: 'https://example.test/mcp', tokens: { access_token: 'new' } });
      if (backend.sealsOAuth) {
        await expect(login).rejects.toMatchObject({ code: 'STORE_SECRET_KEY' });
        expect(await store.oauth.get('github')).toMatchObject({ state: 'unreadable' });
      } else {
        await login;
        expect(await store.oauth.get('github')).toMatchObject({ state: 'readable', value: { tokens: { access_token: 'new' } } });
      }
    },
  );

  it('runs work under a name on one replica at a time', async () => {
    const a = await replica({ listen: false });
    const b = await replica({ listen: false });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const first = a.runExclusive('discover:fs', async () => {
      entered();
      await held;
      return 'a';
    });
    await inside;
    expect(await b.runExclusive('discover:fs', () => Promise.resolve('b'))).toEqual({ ran: false });
    // Nor twice at once on one replica.
    expect(await a.runExclusive('discover:fs', () => Promise.resolve('a again'))).toEqual({ ran: false });
    expect(await b.runExclusive('discover:other', () => Promise.resolve('b'))).toEqual({ ran: true, value: 'b' });
    release();
    expect(await first).toEqual({ ran: true, value: 'a' });
    expect(await b.runExclusive('discover:fs', () => Promise.resolve('b'))).toEqual({ ran: true, value: 'b' });
  });

  it('tells replica B of a change made through replica A, naming what changed', async () => {
    const a = await replica();
    const b = await replica();
    const heard = nextChange(b, (change) => (change.type === 'change' && change.kind === 'toolsets' ? change : undefined));
    const revision = await a.toolsets.put('web', { name: 'web', tools: ['http.get'] });
    expect(await heard).toEqual({ type: 'change', kind: 'toolsets', key: 'web', op: 'put', revision, missed: false });
    const deleted = nextChange(b, (change) => (change.type === 'change' && change.op === 'delete' ? change : undefined));
    await a.toolsets.delete('web');
    expect(await deleted).toMatchObject({ kind: 'toolsets', key: 'web' });
  });

  it('loses none of 2 × 100 concurrent toolset saves through two replicas, and reports none saved that was not', async () => {
    const a = await replica({ poolSize: 5 });
    const b = await replica({ poolSize: 5 });
    const heardByB = new Set<string>();
    b.onChange((change) => {
      if (change.type === 'change' && change.kind === 'toolsets') heardByB.add(change.key);
    });
    const saves = [a, b].flatMap((store, side) =>
      Array.from({ length: 100 }, (_, i) => {
        const name = `set-${side}-${i}`;
        return store.toolsets.put(name, { name, tools: [`srv.tool${i}`] }).then(
          () => ({ name, saved: true }),
          () => ({ name, saved: false }),
        );
      }),
    );
    const outcomes = await Promise.all(saves);
    const stored = new Map((await a.toolsets.list()).map((record) => [record.key, record.value]));
    const saved = outcomes.filter((outcome) => outcome.saved).map((outcome) => outcome.name);
    expect(saved).toHaveLength(200);
    for (const name of saved) expect(stored.get(name)?.name).toBe(name);
    expect(stored.size).toBe(200);
    // Every save through A is heard by B.
    await expect.poll(() => [...heardByB].filter((name) => name.startsWith('set-0-')).length, { timeout: 10_000 }).toBe(100);
  });
});
