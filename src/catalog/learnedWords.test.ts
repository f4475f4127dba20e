// The learned-words store: records, fades, stays bounded, survives a restart, and two processes
// recording at once lose nothing.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { LearnedWordsStore } from './learnedWords.js';
import { CatalogSearch } from './search.js';
import { DEFAULT_FUSION } from './searchTypes.js';
import { queryKeyOf } from './queryWords.js';
import { SearchLearning } from './searchLearning.js';

const DAY = 86_400_000;
const tempDir = useTempDir('loadout-learned-');
const tempFile = () => path.join(tempDir(), 'learned-words.json');

describe('LearnedWordsStore', () => {
  it('records words for tools, strongest first, and a new store on the same file reads them (restart)', async () => {
    const file = tempFile();
    const store = new LearnedWordsStore(file);
    await store.record(['jira.create'], ['ticket', 'bug']);
    await store.record(['jira.create'], ['ticket']);
    expect(await new LearnedWordsStore(file).read()).toEqual(new Map([['jira.create', 'ticket bug']]));
  });

  it('fades old evidence by half-life and forgets what fell below the minimum', async () => {
    const file = tempFile();
    let now = 0;
    const store = new LearnedWordsStore(file, { halfLifeDays: 1, minimumEvidence: 0.2 }, () => now);
    await store.record(['a.tool'], ['old']);
    now = 2 * DAY;
    await store.record(['a.tool'], ['new']);
    expect(await store.read()).toEqual(new Map([['a.tool', 'new old']])); // old: 0.25 left
    now = 3 * DAY;
    expect(await store.read()).toEqual(new Map([['a.tool', 'new']])); // old: 0.125, under 0.2
  });

  it('keeps at most wordsPerTool words per tool and the strongest `tools` tools', async () => {
    const file = tempFile();
    const store = new LearnedWordsStore(file, { wordsPerTool: 2, tools: 2 });
    await store.record(['t.one'], ['a', 'b', 'c']);
    await store.record(['t.one'], ['c']);
    await store.record(['t.two', 't.three'], ['x']);
    await store.record(['t.two'], ['y']);
    const read = await store.read();
    expect(read.get('t.one')?.split(' ')).toHaveLength(2);
    expect(read.get('t.one')).toMatch(/^c /);
    expect([...read.keys()].sort()).toEqual(['t.one', 't.two']);
  });

  it('starts empty from a corrupt file rather than failing', async () => {
    const file = tempFile();
    writeFileSync(file, '{ not json');
    const store = new LearnedWordsStore(file);
    expect(await store.read()).toEqual(new Map());
    await store.record(['t.x'], ['word']);
    expect(await store.read()).toEqual(new Map([['t.x', 'word']]));
  });

  it("answers a record with what the file then holds, another process's records included, as a fresh read would", async () => {
    const file = tempFile();
    const now = () => 5 * DAY;
    await new LearnedWordsStore(file, {}, now).record(['other.tool'], ['theirs'], 'their queri');
    const store = new LearnedWordsStore(file, {}, now);
    const learned = await store.record(['my.tool'], ['mine'], 'my queri');
    expect(learned).toEqual(await store.readAll());
    expect(learned?.words.get('other.tool')).toBe('theirs');
    expect(learned?.queries.get('their queri')).toEqual(new Map([['other.tool', 1]]));
    expect(await store.record([], ['nothing'])).toBeUndefined();
  });

  it('loses no write when two processes record at the same time', async () => {
    const file = tempFile();
    const module = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/catalog/learnedWords.js');
    const script = `const { LearnedWordsStore } = await import(${JSON.stringify(module)});
      const store = new LearnedWordsStore(${JSON.stringify(file)});
      for (let i = 0; i < 15; i++) await store.record([process.argv[1] + '.tool'], ['w' + i], process.argv[1] + ' q' + i);`;
    await Promise.all(['p1', 'p2'].map((name) => promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, name])));
    const read = await new LearnedWordsStore(file).read();
    expect(read.get('p1.tool')?.split(' ')).toHaveLength(15);
    expect(read.get('p2.tool')?.split(' ')).toHaveLength(15);
    const { queries } = await new LearnedWordsStore(file).readAll();
    expect([...queries.keys()].filter((key) => key.startsWith('p1 ') || key.startsWith('p2 '))).toHaveLength(30);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { version: number }).version).toBe(1);
  });
});

describe('SearchLearning', () => {
  it("credits the session's last query to the tools it then uses, once, and nothing without a query", async () => {
    const file = tempFile();
    let learned = 0;
    const learning = new SearchLearning(new LearnedWordsStore(file), () => {
      learned++;
    });
    const session = {};
    await learning.used(session, ['t.unrelated']);
    learning.queried(session, "Please file a ticket for 'the crash' in 2 minutes");
    await learning.used(session, ['jira.create']);
    await learning.used(session, ['jira.create']);
    await learning.used({}, ['t.other_session']);
    expect(await new LearnedWordsStore(file).read()).toEqual(new Map([['jira.create', 'file minutes ticket']]));
    expect(learned).toBe(1);
  });
});

describe('learning that remembers', () => {
  // Word matches alone, without the built-in request vocabulary (which maps "jot" and "remember"
  // to memory words): only learning leads these queries to the memory tool.
  const plain = { vectorFile: false, fusion: { ...DEFAULT_FUSION, requestWords: 0 } } as const;
  const tools = [
    catalogTool('notes', 'search_notes', 'Search the notes by text.'),
    catalogTool('notes', 'create_note', 'Write a new note.'),
    catalogTool('memory', 'add_observations', 'Add observations to existing entities in the knowledge graph.'),
    catalogTool('files', 'write_file', 'Write text to a file.'),
  ];
  const ranked = (search: CatalogSearch, query: string) => search.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);
  const learnedSearch = async (store: LearnedWordsStore) => {
    const { words, queries } = await store.readAll();
    return new CatalogSearch(tools, { ...plain, vocabulary: { learned: words }, recall: queries });
  };

  it('ranks the tool chosen after a query first when the same or a nearly identical query comes again, even one no word led to', async () => {
    const store = new LearnedWordsStore(tempFile());
    const query = 'jot down that Priya joined Platform';
    expect(ranked(new CatalogSearch(tools, plain), query)[0]).not.toBe('memory.add_observations');
    const learning = new SearchLearning(store, () => undefined);
    const session = {};
    learning.queried(session, query, ['notes.create_note']);
    await learning.used(session, ['memory.add_observations']);
    const search = await learnedSearch(store);
    expect(ranked(search, query)[0]).toBe('memory.add_observations');
    expect(ranked(search, 'Jot down: Priya joined Platform!')[0]).toBe('memory.add_observations');
    expect(ranked(search, 'please jot down that Priya joined the Platform team')[0]).toBe('memory.add_observations');
    // A different request is not taken for the same one.
    expect(ranked(search, 'search notes for Priya')[0]).toBe('notes.search_notes');
    expect(search.search({ query, limit: 10, offset: 0 }).strong).toBe(true);
  });

  it('still teaches words: a similar but different query finds the tool more easily', async () => {
    const store = new LearnedWordsStore(tempFile());
    const learning = new SearchLearning(store, () => undefined);
    const session = {};
    learning.queried(session, 'remember that the deploy key rotates monthly');
    await learning.used(session, ['memory.add_observations']);
    expect(ranked(new CatalogSearch(tools, plain), 'remember the release date')).not.toContain('memory.add_observations');
    expect(ranked(await learnedSearch(store), 'remember the release date')[0]).toBe('memory.add_observations');
  });

  it('fades: a remembered query loses its hold as its evidence halves away', async () => {
    let now = 0;
    const store = new LearnedWordsStore(tempFile(), { halfLifeDays: 1, minimumEvidence: 0.2 }, () => now);
    await store.record(['memory.add_observations'], ['jot'], queryKeyOf('jot down the plan'));
    expect((await store.readAll()).queries.get(queryKeyOf('jot down the plan'))).toEqual(new Map([['memory.add_observations', 1]]));
    now = 2 * 86_400_000;
    expect((await store.readAll()).queries.get(queryKeyOf('jot down the plan'))?.get('memory.add_observations')).toBeCloseTo(0.25);
    now = 3 * 86_400_000;
    expect((await store.readAll()).queries.size).toBe(0);
    expect(ranked(await learnedSearch(store), 'jot down the plan')[0]).not.toBe('memory.add_observations');
  });

  it('changes nothing for a query that led nowhere, and a call counts only for a tool its answer showed', async () => {
    const file = tempFile();
    const store = new LearnedWordsStore(file);
    const learning = new SearchLearning(store, () => undefined);
    const session = {};
    learning.queried(session, 'book a flight', ['notes.create_note']);
    learning.queried(session, 'jot down the plan', ['notes.create_note']);
    expect(learning.expects(session, 'files.write_file')).toBe(false);
    expect(learning.expects(session, 'notes.create_note')).toBe(true);
    expect(await store.readAll()).toEqual({ words: new Map(), queries: new Map() });
    await learning.used(session, ['notes.create_note']);
    expect(learning.expects(session, 'notes.create_note')).toBe(false);
    const { queries } = await store.readAll();
    expect([...queries.keys()]).toEqual([queryKeyOf('jot down the plan')]);
  });
});
