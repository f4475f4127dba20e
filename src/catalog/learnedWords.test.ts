// The learned-words store: records, fades, stays bounded, survives a restart, and two processes
// recording at once lose nothing.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LearnedWordsStore } from './learnedWords.js';
import { SearchLearning } from './searchLearning.js';

const DAY = 86_400_000;
const tempFile = () => path.join(mkdtempSync(path.join(tmpdir(), 'loadout-learned-')), 'learned-words.json');

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

  it('loses no write when two processes record at the same time', async () => {
    const file = tempFile();
    const module = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/catalog/learnedWords.js');
    const script = `const { LearnedWordsStore } = await import(${JSON.stringify(module)});
      const store = new LearnedWordsStore(${JSON.stringify(file)});
      for (let i = 0; i < 15; i++) await store.record([process.argv[1] + '.tool'], ['w' + i]);`;
    await Promise.all(['p1', 'p2'].map((name) => promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, name])));
    const read = await new LearnedWordsStore(file).read();
    expect(read.get('p1.tool')?.split(' ')).toHaveLength(15);
    expect(read.get('p2.tool')?.split(' ')).toHaveLength(15);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { version: number }).version).toBe(1);
  });
});

describe('SearchLearning', () => {
  it("credits the session's last query to the tools it then uses, once, and nothing without a query", async () => {
    const file = tempFile();
    let learned = 0;
    const learning = new SearchLearning(new LearnedWordsStore(file), () => {
      learned++;
      return Promise.resolve();
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
