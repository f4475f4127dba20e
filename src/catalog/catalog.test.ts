// Catalog: enabled tools only, minisearch ranking, server filter, paging and suggestions.
import type { Tool } from '@modelcontextprotocol/server';
import MiniSearch from 'minisearch';
import { describe, expect, it, vi } from 'vitest';
import { ServerConfigSchema } from '../config/index.js';
import type { Grants } from '../identity/index.js';
import { Catalog } from './catalog.js';

function tool(name: string, description: string): Tool {
  return { name, description, inputSchema: { type: 'object' } };
}

const catalog = Catalog.build({
  configs: {
    fs: ServerConfigSchema.parse({ command: 'node', tools: { delete_file: { enabled: false } } }),
    git: ServerConfigSchema.parse({ command: 'node' }),
    off: ServerConfigSchema.parse({ command: 'node', enabled: false }),
  },
  definitions: {
    fs: {
      discoveredAt: 'x',
      tools: [
        tool('read_file', 'Read the complete contents of a file from disk.'),
        tool('write_file', 'Create or overwrite a file.'),
        tool('list_directory', 'List the entries of a directory.'),
        tool('delete_file', 'Delete a file.'),
      ],
    },
    git: {
      discoveredAt: 'x',
      tools: [
        tool('status', 'Show the working tree status.'),
        tool('log', 'Show commit logs, which may mention a file.'),
        tool('readFileAtRevision', 'Contents of a path at a commit.'),
      ],
    },
    off: { discoveredAt: 'x', tools: [tool('read_file', 'Read a file.')] },
  },
});

describe('Catalog', () => {
  it('holds only enabled servers and hides disabled tools from listing', () => {
    expect(catalog.visible().map((t) => t.id)).toEqual([
      'fs.read_file',
      'fs.write_file',
      'fs.list_directory',
      'git.status',
      'git.log',
      'git.readFileAtRevision',
    ]);
    expect(catalog.get('fs.delete_file')?.enabled).toBe(false);
    expect(catalog.get('off.read_file')).toBeUndefined();
  });

  it('lists everything in config order without a query', () => {
    const { total, tools } = catalog.search({ limit: 50, offset: 0 });
    expect(total).toBe(6);
    expect(tools.map((t) => t.id)[0]).toBe('fs.read_file');
  });

  it('ranks by relevance with a query, name matches first', () => {
    const { tools } = catalog.search({ query: 'read file', limit: 3, offset: 0 });
    expect(tools[0]!.id).toBe('fs.read_file');
    expect(tools.map((t) => t.id)).toContain('git.readFileAtRevision');
    expect(tools.map((t) => t.id)).not.toContain('fs.delete_file');
  });

  it('ignores stop words, so "read a file" does not match every word starting with "a"', () => {
    const withAdd = Catalog.build({
      configs: { t: ServerConfigSchema.parse({ command: 'node' }) },
      definitions: { t: { discoveredAt: 'x', tools: [tool('read_file', 'Read a file.'), tool('add', 'Add all amounts.')] } },
      search: { vectorFile: false },
    });
    expect(withAdd.search({ query: 'read a file', limit: 10, offset: 0 }).tools.map((t) => t.id)).toEqual(['t.read_file']);
  });

  it('ranks without fuzzy or prefix matching, and keeps them for suggestions', () => {
    const spy = vi.spyOn(MiniSearch.prototype, 'search');
    const fresh = Catalog.build({
      configs: { git: ServerConfigSchema.parse({ command: 'node' }) },
      definitions: { git: { discoveredAt: 'x', tools: [tool('status', 'Show status')] } },
    });
    fresh.search({ query: 'statu', limit: 5, offset: 0 });
    expect(spy).not.toHaveBeenCalled();
    expect(fresh.suggest('git.statsu')).toEqual(['git.status']);
    spy.mockRestore();
  });

  it('filters by server, with and without a query', () => {
    expect(catalog.search({ server: 'git', limit: 50, offset: 0 }).tools.map((t) => t.id)).toEqual([
      'git.status',
      'git.log',
      'git.readFileAtRevision',
    ]);
    const ranked = catalog.search({ query: 'file', server: 'git', limit: 50, offset: 0 });
    expect(ranked.tools.length).toBeGreaterThan(0);
    expect(ranked.tools.every((t) => t.server === 'git')).toBe(true);
  });

  it('pages with limit and offset and reports the total', () => {
    const first = catalog.search({ limit: 2, offset: 0 });
    const second = catalog.search({ limit: 2, offset: 2 });
    const past = catalog.search({ limit: 2, offset: 10 });
    expect(first.total).toBe(6);
    expect([...first.tools, ...second.tools].map((t) => t.id)).toEqual(
      catalog
        .visible()
        .slice(0, 4)
        .map((t) => t.id),
    );
    expect(past.tools).toEqual([]);
    expect(past.total).toBe(6);
  });

  it('suggests close names for a typo', () => {
    expect(catalog.suggest('fs.read_fiel')).toContain('fs.read_file');
    expect(catalog.suggest('stauts')).toContain('git.status');
  });
});

describe("a server's own words", () => {
  const build = (about?: { description: string }) =>
    Catalog.build({
      configs: { archive: ServerConfigSchema.parse({ command: 'node' }), crm: ServerConfigSchema.parse({ command: 'node' }) },
      definitions: {
        crm: {
          discoveredAt: 'x',
          tools: [tool('get_record', 'Get one record by id.'), tool('list_records', 'List records.')],
          ...(about ? { about } : {}),
        },
        archive: { discoveredAt: 'x', tools: [tool('get_record', 'Get one record by id.'), tool('put_record', 'Store a record.')] },
      },
      search: { vectorFile: false },
    });
  const ranked = (catalog: Catalog, query: string) => catalog.search({ query, limit: 10, offset: 0 }).tools.map((hit) => hit.id);

  it('are searched as a field of its tools: a query naming what the server is for finds them', () => {
    expect(ranked(build(), 'customer contacts record')[0]).toBe('archive.get_record');
    const about = build({ description: 'Customer relationship management: contacts, deals and their records.' });
    expect(ranked(about, 'customer contacts record').slice(0, 2).sort()).toEqual(['crm.get_record', 'crm.list_records']);
    expect(about.serverSummaries().get('crm')).toEqual({
      server: 'crm',
      purpose: 'Customer relationship management: contacts, deals and their records',
      tools: 2,
    });
  });

  it('searches no words of a server granted in part: its own words may name its other tools', () => {
    const vault = Catalog.build({
      configs: { vault: ServerConfigSchema.parse({ command: 'node' }) },
      definitions: {
        vault: {
          discoveredAt: 'x',
          about: { title: 'Vault', instructions: 'Call rotate_secret for the zebra credentials.' },
          tools: [tool('read_note', 'Read a note.'), tool('rotate_secret', 'Rotate a secret.')],
        },
      },
    });
    const zebra = (view: Catalog) => view.search({ query: 'zebra', limit: 5, offset: 0 }).tools.map((found) => found.id);
    expect(zebra(vault)).toContain('vault.read_note');
    const readOnly: Grants = {
      tool: (_server, name) => name === 'read_note',
      prompt: () => false,
      resources: () => false,
      server: () => true,
      wholeServer: () => false,
      toolset: () => false,
    };
    expect(zebra(vault.restrictedTo(readOnly))).toEqual([]);
  });
});
