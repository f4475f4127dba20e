// Catalog search: tokenization, field weighting, fusion with the word vectors, the vector file
// reader and its fallback, and bad queries.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { CatalogSearch } from './search.js';
import { DEFAULT_FUSION } from './searchTypes.js';
import { queryWordsOf } from './queryWords.js';
import { contentWordsOf, stem, toolTextOf, wordsOf } from './searchText.js';
import { WordVectors, defaultWordVectorFile, loadWordVectors } from './wordVectors.js';

const ids = (search: CatalogSearch, query: string, limit = 10) => search.search({ query, limit, offset: 0 }).tools.map((tool) => tool.id);

describe('search text', () => {
  it('splits camelCase, snake_case, kebab-case, dots and acronyms into lowercase words', () => {
    expect(wordsOf('linear_getIssueHistory list-databases fs.readFile HTMLParser')).toEqual([
      'linear',
      'get',
      'issue',
      'history',
      'list',
      'databases',
      'fs',
      'read',
      'file',
      'html',
      'parser',
      'readfile',
      'htmlparser',
    ]);
    expect(wordsOf('Ünïcode wörter: größeDatei')).toEqual(['ünïcode', 'wörter', 'größe', 'datei', 'größedatei']);
  });

  it('keeps a product name whole beside its parts, so "mysql" and "github" match MySQL and GitHub', () => {
    expect(wordsOf('MySQL GitHub PostgreSQL')).toEqual(['my', 'sql', 'git', 'hub', 'postgre', 'sql', 'mysql', 'github', 'postgresql']);
    const tools = [
      catalogTool('db', 'list_tables', 'List the tables of a MySQL database.'),
      catalogTool('azure', 'list_tables', 'List the tables of an Azure SQL database.'),
    ];
    const engine = new CatalogSearch(tools, { vectorFile: false });
    expect(ids(engine, 'mysql tables')[0]).toBe('db.list_tables');
  });

  it('drops function words and chat filler', () => {
    expect(contentWordsOf('Can you please help me, I need to read a file')).toEqual(['read', 'file']);
  });

  it('stems lightly: plurals, -ing, -ed meet; organization is not organ', () => {
    expect(new Set(['create', 'creates', 'created', 'creating'].map(stem)).size).toBe(1);
    expect(stem('entities')).toBe(stem('entity'));
    expect(stem('organization')).not.toBe(stem('organ'));
    expect(stem('status')).toBe('status');
  });

  it('reads at most the first 2,000 characters of a query, so a pathological one is answered at once', () => {
    // Before the cut, pasted-value matching on 200,000 characters of "a." took minutes.
    expect(queryWordsOf('a.'.repeat(100_000))).toEqual([]);
    expect(queryWordsOf(`${'x '.repeat(1_000)}zebra`)).toEqual([]);
    expect(queryWordsOf(`${'x '.repeat(900)}zebra`)).toEqual(['zebra']);
  });

  it("drops quoted text and bare numbers from a query: they are the user's data", () => {
    expect(queryWordsOf("Tick off 'Write launch blog post' in Asana, it's finished; 50 of them")).toEqual(['tick', 'asana', 'finished']);
  });

  it('indexes input-schema property names and descriptions, nested ones included', () => {
    const text = toolTextOf(
      catalogTool('db', 'find', 'Find documents.', {
        inputSchema: {
          type: 'object',
          properties: {
            filter: {
              type: 'object',
              description: 'Query filter',
              properties: { projection: { type: 'object', description: 'Fields to return' } },
            },
            items: { type: 'array', items: { type: 'object', properties: { sortOrder: { type: 'string' } } } },
          },
        },
      }),
    );
    expect(text.params).toContain('projection');
    expect(text.params).toContain('Fields to return');
    expect(text.params).toContain('sortOrder');
  });
});

describe('ranking', () => {
  const tools = [
    catalogTool('fs', 'read_file', 'Read the complete contents of a file.'),
    catalogTool('fs', 'create_directory', 'Create a new directory, with parents.'),
    catalogTool('fs', 'move_file', 'Move or rename files and directories.'),
    catalogTool(
      'notes',
      'archive',
      'Archive a note. Long text that mentions that a file could be read, reading and a file again and a file once more.',
    ),
    catalogTool('org', 'list_members', 'List the members of the organization.'),
    catalogTool('org', 'organ_donors', 'Organ donor registry.'),
    catalogTool('db', 'find', 'Run a query.', {
      inputSchema: { type: 'object', properties: { collection: { type: 'string', description: 'Collection name' } } },
    }),
  ];
  const search = new CatalogSearch(tools);

  it('ranks a name match above the same words deep in a long description', () => {
    expect(ids(search, 'read file')[0]).toBe('fs.read_file');
  });

  it('matches no prefixes and no typos: "organization" does not find organ, "direct" does not find directory', () => {
    const lexicalOnly = new CatalogSearch(tools, { vectorFile: false });
    expect(ids(lexicalOnly, 'organization')).toEqual(['org.list_members']);
    expect(ids(lexicalOnly, 'direct')).toEqual([]);
  });

  it('finds through parameter text', () => {
    expect(ids(search, 'collection')[0]).toBe('db.find');
  });

  it('finds a tool by meaning when no word matches (word vectors)', () => {
    // Without the built-in request vocabulary, which maps make → create and folder → directory too.
    const fusion = { ...DEFAULT_FUSION, requestWords: 0 };
    expect(ids(new CatalogSearch(tools, { vectorFile: false, fusion }), 'make a folder')).not.toContain('fs.create_directory');
    expect(ids(new CatalogSearch(tools, { fusion }), 'make a folder').slice(0, 3)).toContain('fs.create_directory');
  });

  it('fuses: a tool both rankings like beats one only one of them likes', () => {
    const result = new CatalogSearch(tools).rank({ query: 'rename files', limit: 3, offset: 0, explain: true });
    expect(result.hits[0]!.tool.id).toBe('fs.move_file');
    expect(result.hits[0]!.lexical?.matches.map((match) => match.term)).toContain(stem('files'));
    expect(result.hits[0]!.semantic?.rank).toBe(1);
    expect(result.vectors).toBe(true);
  });

  it('says when no tool matches strongly', () => {
    expect(search.search({ query: 'read file', limit: 3, offset: 0 }).strong).toBe(true);
    expect(search.search({ query: 'volcano weather forecast', limit: 3, offset: 0 }).strong).toBe(false);
  });

  it('filters by server and pages', () => {
    expect(search.search({ query: 'file', server: 'fs', limit: 10, offset: 0 }).tools.every((tool) => tool.server === 'fs')).toBe(true);
    const all = ids(search, 'file directory', 10);
    expect(search.search({ query: 'file directory', limit: 1, offset: 1 }).tools.map((tool) => tool.id)).toEqual(all.slice(1, 2));
  });
});

describe('bad queries', () => {
  const search = new CatalogSearch([catalogTool('fs', 'read_file', 'Read a file.'), catalogTool('fs', 'write_file', 'Write a file.')]);

  it('an empty or blank query lists tools in order', () => {
    expect(search.search({ query: '   ', limit: 10, offset: 0 }).tools.map((tool) => tool.id)).toEqual(['fs.read_file', 'fs.write_file']);
  });

  it('a 10 KB query is cut to its first words, not refused, and answers fast', () => {
    const query = `read file ${'lorem ipsum dolor sit amet '.repeat(400)}`.slice(0, 10_240);
    const start = performance.now();
    expect(ids(search, query)[0]).toBe('fs.read_file');
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('a query in another script or only punctuation matches nothing and does not throw', () => {
    expect(search.search({ query: 'ファイルを読む', limit: 10, offset: 0 })).toMatchObject({ total: 0, tools: [], strong: false });
    expect(search.search({ query: '?!… —', limit: 10, offset: 0 })).toMatchObject({ total: 0, tools: [] });
  });

  it('limit 0 and a limit beyond the catalog give an empty page and the whole catalog', () => {
    expect(search.search({ query: 'file', limit: 0, offset: 0 }).tools).toEqual([]);
    expect(search.search({ query: 'file', limit: 10_000, offset: 0 }).tools).toHaveLength(2);
  });
});

describe('word-vector file', () => {
  const dir = useTempDir('loadout-vectors-');

  it('reads the shipped file: 50k words, 100 dimensions, unit vectors, frequency ranks', () => {
    const vectors = WordVectors.read(defaultWordVectorFile());
    expect(vectors.size).toBe(50_000);
    expect(vectors.dimensions).toBe(100);
    expect(vectors.rank('the')).toBeLessThan(vectors.rank('directory')!);
    const folder = vectors.vector('folder')!;
    expect(Math.hypot(...folder)).toBeCloseTo(1, 5);
  });

  it("reads each word's hubness, higher for broad words that sit near many others", () => {
    const vectors = WordVectors.read(defaultWordVectorFile());
    expect(vectors.meanHubness).toBeGreaterThan(0);
    expect(vectors.meanHubness).toBeLessThan(1);
    expect(vectors.hubness('sort')).toBeGreaterThan(vectors.hubness('penguin')!);
    expect(vectors.hubness('no-such-word')).toBeUndefined();
  });

  it('finds each word at its line of the file, byte for byte, and no other word', () => {
    const shipped = WordVectors.read(defaultWordVectorFile());
    const bytes = readFileSync(defaultWordVectorFile());
    const words = bytes.toString('utf8', 20, 20 + bytes.readUInt32LE(16)).split('\n');
    expect(words.every((word, rank) => shipped.rank(word) === rank)).toBe(true);
    // Non-ASCII words, prefixes of one another, and a word listed twice (its last line answers, as a Map built from the list did).
    const listed = ['file', 'files', 'café', 'naïve', '日本', 'fil', 'files'];
    const dimensions = 2;
    const header = Buffer.alloc(20);
    const wordBytes = Buffer.from(listed.join('\n'), 'utf8');
    header.write('LDWV', 0, 'ascii');
    header.writeUInt32LE(2, 4);
    header.writeUInt32LE(listed.length, 8);
    header.writeUInt32LE(dimensions, 12);
    header.writeUInt32LE(wordBytes.length, 16);
    const file = path.join(dir(), 'small.bin');
    writeFileSync(file, Buffer.concat([header, wordBytes, Buffer.alloc(listed.length * (dimensions + 1), 1)]));
    const small = WordVectors.read(file);
    expect(['file', 'files', 'café', 'naïve', '日本', 'fil'].map((word) => small.rank(word))).toEqual([0, 6, 2, 3, 4, 5]);
    expect(['fi', 'filesx', 'cafe', '日', '', 'file\nfiles'].map((word) => small.rank(word))).toEqual(Array(6).fill(undefined));
  });

  it('refuses a file of an older layout, asking for a reinstall', () => {
    const old = path.join(dir(), 'old.bin');
    const bytes = Buffer.from(readFileSync(defaultWordVectorFile()));
    bytes.writeUInt32LE(1, 4);
    writeFileSync(old, bytes);
    expect(() => WordVectors.read(old)).toThrow(/corrupt \(version 1, expected 2\); reinstall loadout/);
  });

  it('refuses a missing, foreign or truncated file with a clear error', () => {
    expect(() => WordVectors.read(path.join(dir(), 'absent.bin'))).toThrow(/Cannot read the word-vector file .*absent\.bin/);
    const foreign = path.join(dir(), 'foreign.bin');
    writeFileSync(foreign, 'not vectors at all');
    expect(() => WordVectors.read(foreign)).toThrow(/corrupt \(not a loadout vector file\)/);
    const truncated = path.join(dir(), 'truncated.bin');
    writeFileSync(truncated, readFileSync(defaultWordVectorFile()).subarray(0, 100_000));
    expect(() => WordVectors.read(truncated)).toThrow(/corrupt \(its length does not match its header\)/);
  });

  it('a corrupt file leaves ranking to word matches, reported once, never thrown', () => {
    const corrupt = path.join(dir(), 'corrupt.bin');
    writeFileSync(corrupt, 'LDWV garbage');
    expect(loadWordVectors(corrupt)).toMatchObject({ ok: false, error: { code: 'SEARCH_VECTORS_INVALID' } });
    const onVectorsUnavailable = vi.fn();
    const search = new CatalogSearch(
      [catalogTool('fs', 'read_file', 'Read a file.'), catalogTool('fs', 'create_directory', 'Create a directory.')],
      { vectorFile: corrupt, onVectorsUnavailable },
    );
    expect(ids(search, 'read file')).toEqual(['fs.read_file']);
    expect(ids(search, 'subfolder')).toEqual([]);
    expect(search.rank({ query: 'read', limit: 1, offset: 0 }).vectors).toBe(false);
    expect(onVectorsUnavailable).toHaveBeenCalledTimes(1);
    expect((onVectorsUnavailable.mock.calls[0]![0] as Error).message).toMatch(/corrupt/);
  });
});

describe("the user's and learned vocabulary", () => {
  const tools = [
    catalogTool('tracker', 'create_issue', 'Create a new issue.'),
    catalogTool('tracker', 'get_cycle', 'Get the active cycle of a team.'),
  ];

  it('searches per-tool keywords from servers.yaml', () => {
    expect(ids(new CatalogSearch(tools, { vectorFile: false }), 'timebox')).toEqual([]);
    const search = new CatalogSearch(tools, {
      vectorFile: false,
      vocabulary: { keywords: new Map([['tracker.get_cycle', 'timebox iteration']]) },
    });
    expect(ids(search, 'current timebox')).toEqual(['tracker.get_cycle']);
  });

  it('expands a query word to its synonyms', () => {
    expect(ids(new CatalogSearch(tools, { vectorFile: false }), 'file a gripe')).toEqual([]);
    const search = new CatalogSearch(tools, { vectorFile: false, synonyms: new Map([['gripe', ['issue']]]) });
    expect(ids(search, 'file a gripe')[0]).toBe('tracker.create_issue');
  });

  it('searches learned words as a low-weight field: they reorder, they do not outrank the name', () => {
    const learned = new Map([['tracker.get_cycle', 'issue']]);
    const search = new CatalogSearch(tools, { vectorFile: false, vocabulary: { learned } });
    expect(ids(search, 'issue')).toEqual(['tracker.create_issue', 'tracker.get_cycle']);
    expect(
      ids(new CatalogSearch(tools, { vectorFile: false, vocabulary: { learned: new Map([['tracker.get_cycle', 'sprint']]) } }), 'sprint'),
    ).toEqual(['tracker.get_cycle']);
  });
});

describe('the built-in request vocabulary', () => {
  const tools = [
    catalogTool('memory', 'create_entities', 'Create multiple new entities in the knowledge graph.'),
    catalogTool('fs', 'read_file', 'Read the complete contents of a file.'),
    catalogTool('chat', 'send_message', 'Send a message to a channel.'),
    catalogTool('chat', 'ping_server', 'Check that the chat server answers.'),
    catalogTool('tracker', 'create_issue', 'Create a new issue.'),
  ];
  const without = { fusion: { ...DEFAULT_FUSION, requestWords: 0 } };

  it('finds a memory tool for "remember a fact", where the word vectors alone find remember≈read', () => {
    expect(ids(new CatalogSearch(tools, without), 'remember a fact')[0]).not.toBe('memory.create_entities');
    expect(ids(new CatalogSearch(tools), 'remember a fact')[0]).toBe('memory.create_entities');
    expect(ids(new CatalogSearch(tools), 'remembered facts')[0]).toBe('memory.create_entities');
  });

  it('maps everyday request words to tool words, also without the word vectors', () => {
    const lexicalOnly = new CatalogSearch(tools, { vectorFile: false });
    expect(ids(new CatalogSearch(tools, { ...without, vectorFile: false }), 'raise a ticket')).toEqual([]);
    expect(ids(lexicalOnly, 'raise a ticket')).toEqual(['tracker.create_issue']);
    expect(ids(lexicalOnly, 'jot this down')).toContain('memory.create_entities');
  });

  it("counts below the query's own words: a tool named by the query still comes first", () => {
    expect(ids(new CatalogSearch(tools), 'ping the chat server')[0]).toBe('chat.ping_server');
    expect(ids(new CatalogSearch(tools), 'ping the team in chat')[0]).toBe('chat.send_message');
  });

  it('shows the words it added in --explain', () => {
    const explained = new CatalogSearch(tools).rank({ query: 'remember a fact', limit: 3, offset: 0, explain: true });
    expect(explained.words).toEqual(expect.arrayContaining(['remember', 'fact', 'memory']));
    expect(explained.hits[0]!.lexical?.matches).toContainEqual({ term: 'memory', fields: ['server'] });
  });
});
