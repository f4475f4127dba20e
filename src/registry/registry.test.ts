// ToolRegistry: lock-serialized, all-or-nothing changes of one session's exposed set.
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../catalog/index.js';
import { ServerConfigSchema } from '../config/index.js';
import { ToolRegistry, type RegistrySource } from './registry.js';

function tool(name: string, extra: Partial<Tool> = {}): Tool {
  return { name, description: `${name} does things`, inputSchema: { type: 'object', properties: {} }, ...extra };
}

function catalogOf(servers: Record<string, Tool[]>, disabled: Record<string, string[]> = {}): Catalog {
  const configs = Object.fromEntries(
    Object.keys(servers).map((server) => [
      server,
      ServerConfigSchema.parse({
        command: 'node',
        tools: Object.fromEntries((disabled[server] ?? []).map((name) => [name, { enabled: false }])),
      }),
    ]),
  );
  const definitions = Object.fromEntries(
    Object.entries(servers).map(([server, tools]) => [server, { discoveredAt: '2026-01-01T00:00:00Z', tools }]),
  );
  return Catalog.build({ configs, definitions });
}

/** A source whose catalog and health the test can change. */
function mutableSource(initial: Catalog): RegistrySource & { catalogNow: Catalog; down: Set<string>; failNext: boolean } {
  const source = {
    catalogNow: initial,
    down: new Set<string>(),
    failNext: false,
    catalog(): Catalog {
      if (source.failNext) {
        source.failNext = false;
        throw new Error('catalog unreadable');
      }
      return source.catalogNow;
    },
    isServerAvailable: (server: string) => !source.down.has(server),
  };
  return source;
}

const naming = { maxNameLength: 50, reservedNames: new Set(['call-tool']) };
const baseCatalog = catalogOf({
  git: [tool('status', { title: 'Status', outputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }), tool('commit')],
  docs: [tool('search'), tool('fetch')],
});

describe('ToolRegistry', () => {
  it('starts empty and exposes a selection under flattened names with routes', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    expect(registry.snapshot.tools).toEqual([]);
    const change = await registry.equip({ toolset: 'dev', toolIds: ['git.status', 'docs.search'] });
    expect(change.changed).toBe(true);
    expect(change.snapshot.tools.map((t) => t.name)).toEqual(['git_status', 'docs_search']);
    expect(change.snapshot.routes.get('git_status')).toEqual({ server: 'git', tool: 'status', id: 'git.status' });
    expect(registry.snapshot).toBe(change.snapshot);
  });

  it('passes the downstream definition through untouched except for its name and the always-load mark', async () => {
    const catalog = catalogOf({ git: [tool('status', { _meta: { 'vendor/x': 1 } })] });
    const registry = new ToolRegistry(mutableSource(catalog), naming);
    const { snapshot } = await registry.equip({ toolset: 'dev', toolIds: ['git.status'] });
    const cached = catalog.get('git.status')!.definition;
    expect(snapshot.tools[0]).toEqual({ ...cached, name: 'git_status', _meta: { 'vendor/x': 1, 'anthropic/alwaysLoad': true } });
    expect(cached).toEqual(tool('status', { _meta: { 'vendor/x': 1 } }));
    const { snapshot: all } = await registry.equip({ toolset: 'all', toolIds: 'all' });
    expect(all.tools[0]).toEqual({ ...cached, name: 'git_status' });
  });

  it('runs concurrent equips one at a time, each yielding one change, the last one winning', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    const selections = [['git.status'], ['git.commit'], ['docs.search'], ['docs.fetch'], ['git.status', 'docs.fetch']];
    const changes = await Promise.all(selections.map((toolIds, i) => registry.equip({ toolset: `t${i}`, toolIds })));
    expect(changes.map((c) => c.changed)).toEqual([true, true, true, true, true]);
    expect(changes.map((c) => c.snapshot.selection?.toolset)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    expect(registry.snapshot.tools.map((t) => t.name)).toEqual(['git_status', 'docs_fetch']);
  });

  it('holds equips back while an exclusive task runs', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    let release!: () => void;
    const task = registry.runExclusive(() => new Promise<void>((resolve) => (release = resolve)));
    let equipped = false;
    const equip = registry.equip({ toolset: 'dev', toolIds: ['git.status'] }).then(() => (equipped = true));
    // An equip not held back finishes within one turn of the event loop: it touches no I/O.
    await new Promise((resolve) => setImmediate(resolve));
    expect(equipped).toBe(false);
    expect(registry.snapshot.tools).toEqual([]);
    release();
    await task;
    await equip;
    expect(registry.snapshot.tools.map((t) => t.name)).toEqual(['git_status']);
  });

  it('keeps the previous snapshot when building the new one throws', async () => {
    const source = mutableSource(baseCatalog);
    const registry = new ToolRegistry(source, naming);
    const before = (await registry.equip({ toolset: 'dev', toolIds: ['git.status'] })).snapshot;
    source.failNext = true;
    await expect(registry.equip({ toolset: 'docs', toolIds: ['docs.search'] })).rejects.toThrow('catalog unreadable');
    expect(registry.snapshot).toBe(before);
    // The lock is released after a failure.
    expect((await registry.equip({ toolset: 'docs', toolIds: ['docs.search'] })).changed).toBe(true);
  });

  it('reports no change when the same tools are equipped again', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    await registry.equip({ toolset: 'a', toolIds: ['git.status'] });
    expect((await registry.equip({ toolset: 'b', toolIds: ['git.status'] })).changed).toBe(false);
  });

  it('reports only the tools as changed when the equipped servers list no prompts or resources', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    const change = await registry.equip({ toolset: 'dev', toolIds: ['git.status'] });
    expect([change.changed, change.promptsChanged, change.resourcesChanged]).toEqual([true, false, false]);
    const unequipped = await registry.unequip();
    expect([unequipped.changed, unequipped.promptsChanged, unequipped.resourcesChanged]).toEqual([true, false, false]);
  });

  it('unequips everything, and a second unequip changes nothing', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    await registry.equip({ toolset: 'dev', toolIds: ['git.status'] });
    const first = await registry.unequip();
    expect(first.changed).toBe(true);
    expect(first.snapshot.tools).toEqual([]);
    expect(first.snapshot.selection).toBeNull();
    expect((await registry.unequip()).changed).toBe(false);
  });

  it('withholds unknown, disabled and unavailable tools with their reason', async () => {
    const source = mutableSource(catalogOf({ git: [tool('status'), tool('push')], docs: [tool('search')] }, { git: ['push'] }));
    source.down.add('docs');
    const registry = new ToolRegistry(source, naming);
    const { snapshot } = await registry.equip({ toolset: 'dev', toolIds: ['git.status', 'git.push', 'docs.search', 'nope.tool'] });
    expect(snapshot.tools.map((t) => t.name)).toEqual(['git_status']);
    expect(snapshot.withheld).toEqual([
      { id: 'git.push', reason: 'disabled' },
      { id: 'docs.search', reason: 'unavailable' },
      { id: 'nope.tool', reason: 'unknown' },
    ]);
  });

  it('exposes every enabled tool for the all selection', async () => {
    const registry = new ToolRegistry(mutableSource(baseCatalog), naming);
    const { snapshot } = await registry.equip({ toolset: 'all', toolIds: 'all' });
    expect(snapshot.tools.map((t) => t.name).sort()).toEqual(['docs_fetch', 'docs_search', 'git_commit', 'git_status']);
  });

  it('refresh rebuilds the current selection against a new catalog and health', async () => {
    const source = mutableSource(baseCatalog);
    const registry = new ToolRegistry(source, naming);
    await registry.equip({ toolset: 'dev', toolIds: ['git.status', 'docs.search'] });
    expect((await registry.refresh()).changed).toBe(false);
    source.down.add('docs');
    const down = await registry.refresh();
    expect(down.changed).toBe(true);
    expect(down.snapshot.tools.map((t) => t.name)).toEqual(['git_status']);
    expect(down.snapshot.selection?.toolset).toBe('dev');
    source.down.clear();
    source.catalogNow = catalogOf({ git: [tool('status', { description: 'new words' })], docs: [tool('search')] });
    const back = await registry.refresh();
    expect(back.changed).toBe(true);
    expect(back.snapshot.tools.map((t) => t.description)).toEqual(['new words', 'search does things']);
  });
});
