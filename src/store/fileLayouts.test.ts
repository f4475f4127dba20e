import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { StateStore } from '../config/index.js';
import { documentLayout, stateLayout, type FileLayout, type Outcome } from './fileLayouts.js';

// A transaction's decision, with nothing to run after it.
const decide =
  <Write>(change: Outcome<Write, void>['change']) =>
  (): Promise<Outcome<Write, void>> =>
    Promise.resolve({ change, result: () => Promise.resolve() });

// A JSON document of numbers by key; no records left: no file.
function numbersIn(file: string, keys?: readonly string[]): FileLayout<number, number> {
  return documentLayout<number, number>({
    file,
    keys,
    parse: (text) => (text === undefined ? {} : (JSON.parse(text) as Record<string, number>)),
    text: (records) => (Object.keys(records).length ? JSON.stringify(records) : undefined),
  });
}

// numbersIn() that counts its writes of the document.
function countingWrites(file: string): { layout: FileLayout<number, number>; writes: () => number } {
  let writes = 0;
  const layout = documentLayout<number, number>({
    file,
    parse: (text) => (text === undefined ? {} : (JSON.parse(text) as Record<string, number>)),
    text: (records) => {
      writes++;
      return JSON.stringify(records);
    },
  });
  return { layout, writes: () => writes };
}

describe('documentLayout', () => {
  const dir = useTempDir('loadout-layout-');

  it('writes many records with one write of the document, keeping the records it already held', async () => {
    const file = path.join(dir(), 'doc.json');
    await writeFile(file, JSON.stringify({ kept: 0 }));
    const { layout, writes } = countingWrites(file);
    await layout.putAll(new Map(Array.from({ length: 50 }, (_, index) => [`r${index}`, index])));
    expect(writes()).toBe(1);
    const written = JSON.parse(await readFile(file, 'utf8')) as Record<string, number>;
    expect(Object.keys(written)).toHaveLength(51);
    expect(written).toMatchObject({ kept: 0, r0: 0, r49: 49 });
  });

  it('changes several records in one transaction, each seeing its own, the document read and written once', async () => {
    const file = path.join(dir(), 'doc.json');
    await writeFile(file, JSON.stringify({ kept: 0, a: 1, gone: 2 }));
    const { layout, writes } = countingWrites(file);
    const seen: Array<number | undefined> = [];
    const step = (key: string, change: (current: number | undefined) => Outcome<number, string>['change']) => ({
      key,
      work: (current: number | undefined) => {
        seen.push(current);
        return Promise.resolve({ change: change(current), result: () => Promise.resolve(`${key} done`) });
      },
    });
    const results = await layout.transactEach([
      step('a', (current) => ({ write: (current ?? 0) + 10 })),
      step('gone', () => 'delete'),
      step('new', () => ({ write: 3 })),
      step('kept', () => 'keep'),
    ]);
    expect(results).toEqual(['a done', 'gone done', 'new done', 'kept done']);
    expect(seen).toEqual([1, 2, undefined, 0]);
    expect(writes()).toBe(1);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ kept: 0, a: 11, new: 3 });
  });

  it('removes the file when a change leaves it no records, by a transaction or a write of all', async () => {
    const file = path.join(dir(), 'doc.json');
    const layout = numbersIn(file);
    await layout.putAll(new Map([['a', 1]]));
    expect(await layout.readAll()).toEqual(new Map([['a', 1]]));
    await layout.transact('a', decide('delete'));
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    await layout.transact('b', decide({ write: 2 }));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ b: 2 });
  });

  it('refuses a key it does not hold, naming the file, and writes nothing', async () => {
    const file = path.join(dir(), 'one.json');
    const layout = numbersIn(file, ['only']);
    await expect(layout.putAll(new Map([['other', 1]]))).rejects.toThrow(`${file} holds only the key only, not 'other'`);
    await expect(layout.transact('other', decide('keep'))).rejects.toThrow(`${file} holds only the key only, not 'other'`);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });
});

describe('stateLayout', () => {
  const dir = useTempDir('loadout-layout-state-');

  it('refuses a key it does not hold, naming the file, and writes nothing', async () => {
    const file = path.join(dir(), 'state.json');
    const layout = stateLayout<string | null>({
      store: new StateStore(file),
      file,
      keys: ['@last-stop'],
      pick: (state) => ({ '@last-stop': state.activeToolset }),
      put: (state, _key, value) => ({ ...state, activeToolset: value ?? null }),
    });
    await expect(layout.putAll(new Map([['p1', 'dev']]))).rejects.toThrow(`${file} holds only the key @last-stop, not 'p1'`);
    await expect(layout.transact('p1', decide('keep'))).rejects.toThrow(`${file} holds only the key @last-stop, not 'p1'`);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    await layout.putAll(new Map([['@last-stop', 'dev']]));
    expect(await layout.read('@last-stop')).toBe('dev');
  });
});
