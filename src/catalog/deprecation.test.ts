// A tool that says it is deprecated ranks below its replacement: server-filesystem's read_file
// (its description says DEPRECATED) below read_text_file, and the same in a catalog of one's own.
import { readFileSync } from 'node:fs';
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { saysDeprecated } from './deprecation.js';
import { CatalogSearch } from './search.js';

const ids = (search: CatalogSearch, query: string) => search.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);

// server-filesystem's tools as the dev set keeps them (its real definitions).
const filesystem = (
  JSON.parse(readFileSync(new URL('../../test/fixtures/search-dev/catalog.json', import.meta.url), 'utf8')) as {
    servers: { filesystem: { tools: Tool[] } };
  }
).servers.filesystem.tools.map((tool) => catalogTool('filesystem', tool.name, tool.description ?? '', { inputSchema: tool.inputSchema }));

describe('deprecated tools', () => {
  it('reads a DEPRECATED marker anywhere, or the word opening the description, and nothing else', () => {
    const says = (description: string) => saysDeprecated(catalogTool('s', 't', description));
    expect(says('Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.')).toBe(true);
    expect(says('Deprecated: use search_v2.')).toBe(true);
    expect(says('[deprecated] Old search.')).toBe(true);
    expect(says('Lists deprecated packages of a project.')).toBe(false);
    expect(says('Read a file.')).toBe(false);
  });

  it('ranks server-filesystem read_file below read_text_file for "read a file", with and without word vectors', () => {
    expect(filesystem.find((tool) => tool.name === 'read_file')?.definition.description).toMatch(/DEPRECATED/);
    for (const vectorFile of [undefined, false] as const) {
      const ranked = ids(new CatalogSearch(filesystem, vectorFile === false ? { vectorFile } : {}), 'read a file');
      expect(ranked.indexOf('filesystem.read_file')).toBe(ranked.indexOf('filesystem.read_text_file') + 1);
      // With the word vectors (the default), the replacement is the first answer.
      if (vectorFile === undefined) expect(ranked.slice(0, 2)).toEqual(['filesystem.read_text_file', 'filesystem.read_file']);
    }
  });

  it('moves a deprecated tool just below the replacement it names, else its server’s best match, and no further', () => {
    const search = new CatalogSearch(
      [
        catalogTool('notes', 'search_notes', 'DEPRECATED: use find. Search notes by words in their title.'),
        catalogTool('notes', 'find', 'Find notes.'),
        catalogTool('wiki', 'search_pages', 'Search pages by words in their title.'),
      ],
      { vectorFile: false },
    );
    const ranked = ids(search, 'search notes by title words');
    expect(ranked.indexOf('notes.search_notes')).toBe(ranked.indexOf('notes.find') + 1);
    // Naming no replacement, it goes just below its server's best match.
    const unnamed = new CatalogSearch(
      [
        catalogTool('notes', 'search_notes', 'Deprecated. Search notes by title.'),
        catalogTool('notes', 'find_notes', 'Find notes by title.'),
        catalogTool('notes', 'list_notes', 'List notes.'),
      ],
      { vectorFile: false },
    );
    expect(ids(unnamed, 'search notes by title').slice(0, 2)).toEqual(['notes.find_notes', 'notes.search_notes']);
    // Alone on its server, a deprecated tool keeps its place: there is nothing to replace it.
    const alone = new CatalogSearch(
      [catalogTool('old', 'search_notes', 'Deprecated. Search notes.'), catalogTool('wiki', 'pages', 'Pages.')],
      {
        vectorFile: false,
      },
    );
    expect(ids(alone, 'search notes')[0]).toBe('old.search_notes');
  });
});
