// The saved search index: a search over the same tools reads it instead of building, and ranks
// exactly as a fresh build does; a file of other tools, a damaged one or a foreign one is never used.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { WorkInFlight } from '../shared/index.js';
import type { CatalogTool } from './catalogTool.js';
import { PostingsBuilder } from './postings.js';
import { CatalogSearch } from './search.js';
import { decode, encode, SearchIndexFile, type SavedIndex, type SavedIndexPort } from './searchIndexFile.js';

const TOOLS = [
  catalogTool('fs', 'read_file', 'Read the complete contents of a file.'),
  catalogTool('fs', 'list_directory', 'List the files of a directory.'),
  catalogTool('chat', 'send_message', 'Send a message to a channel.'),
  catalogTool('memory', 'create_entities', 'Create entities in the knowledge graph.'),
];

/** The port over `file`, counting loads that found an index and saves asked for. */
function countingPort(file: string, work: WorkInFlight): SavedIndexPort & { found: number; saves: number } {
  const inner = new SearchIndexFile(file, { work });
  const port = {
    found: 0,
    saves: 0,
    load(fingerprint: string, toolCount: number) {
      const index = inner.load(fingerprint, toolCount);
      if (index) port.found++;
      return index;
    },
    save(fingerprint: string, index: SavedIndex) {
      port.saves++;
      inner.save(fingerprint, index);
    },
  };
  return port;
}

const ranking = (search: CatalogSearch, query: string) =>
  search.rank({ query, limit: 10, offset: 0 }).hits.map((hit) => `${hit.tool.id} ${hit.score.toFixed(9)}`);

describe('SearchIndexFile', () => {
  const dir = useTempDir('loadout-search-index-');

  async function savedBy(tools: readonly CatalogTool[]): Promise<{ file: string; work: WorkInFlight }> {
    const file = path.join(dir(), 'search-index.bin');
    const work = new WorkInFlight();
    const port = countingPort(file, work);
    ranking(new CatalogSearch(tools, { savedIndex: port }), 'read a file');
    await work.settled();
    expect(port.saves).toBe(1);
    return { file, work };
  }

  it('lets a search over the same tools rank from the file, exactly as a fresh build ranks', async () => {
    const { file, work } = await savedBy(TOOLS);
    const port = countingPort(file, work);
    const loaded = new CatalogSearch(TOOLS, { savedIndex: port });
    const fresh = new CatalogSearch(TOOLS);
    for (const query of ['read a file', 'post to a channel', 'remember a fact', 'folder contents'])
      expect(ranking(loaded, query)).toEqual(ranking(fresh, query));
    expect(loaded.rank({ query: 'read a file', limit: 1, offset: 0, explain: true }).hits[0]!.lexical!.matches).toEqual(
      fresh.rank({ query: 'read a file', limit: 1, offset: 0, explain: true }).hits[0]!.lexical!.matches,
    );
    expect(port.found).toBe(1);
    await work.settled();
    // Nothing new was built, so nothing is written again.
    expect(port.saves).toBe(0);
  });

  it('is not used for other tools (a changed description): the index is built and the file rewritten', async () => {
    const { file, work } = await savedBy(TOOLS);
    const before = await readFile(file);
    const changed = [...TOOLS.slice(0, 3), catalogTool('memory', 'create_entities', 'Remember facts about the user.')];
    const port = countingPort(file, work);
    expect(ranking(new CatalogSearch(changed, { savedIndex: port }), 'remember facts')).toEqual(
      ranking(new CatalogSearch(changed), 'remember facts'),
    );
    await work.settled();
    expect(port.found).toBe(0);
    expect(port.saves).toBe(1);
    expect((await readFile(file)).equals(before)).toBe(false);
    const again = countingPort(file, work);
    ranking(new CatalogSearch(changed, { savedIndex: again }), 'remember facts');
    expect(again.found).toBe(1);
  });

  it('never trusts a damaged, cut short or foreign file', async () => {
    const { file } = await savedBy(TOOLS);
    const whole = await readFile(file);
    const fingerprint = (JSON.parse(whole.toString('utf8', 12, 12 + whole.readUInt32LE(8))) as { fingerprint: string }).fingerprint;
    expect(decode(whole, fingerprint, TOOLS.length)).toBeDefined();
    const flipped = Buffer.from(whole);
    flipped[flipped.length - 3]! ^= 0xff;
    expect(decode(flipped, fingerprint, TOOLS.length)).toBeUndefined();
    expect(decode(whole.subarray(0, whole.length - 8), fingerprint, TOOLS.length)).toBeUndefined();
    expect(decode(Buffer.from('not an index at all'), fingerprint, TOOLS.length)).toBeUndefined();
    await writeFile(file, 'LDSI garbage');
    expect(new SearchIndexFile(file).load(fingerprint, TOOLS.length)).toBeUndefined();
    expect(new SearchIndexFile(path.join(dir(), 'missing.bin')).load(fingerprint, TOOLS.length)).toBeUndefined();
  });

  it('refuses postings that name a tool beyond the catalog, even with a matching digest', () => {
    const postings = new PostingsBuilder();
    postings.add('file', 0, 1);
    postings.add('file', 7, 1);
    const bytes = encode('print', { lexical: postings.build() });
    expect(decode(bytes, 'print', 2)).toBeUndefined();
    const fitting = new PostingsBuilder();
    fitting.add('file', 1, 1);
    expect(decode(encode('print', { lexical: fitting.build() }), 'print', 2)?.lexical.keys).toEqual(['file']);
  });
});
