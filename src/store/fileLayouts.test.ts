import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { documentLayout } from './fileLayouts.js';

describe('documentLayout', () => {
  const dir = useTempDir('loadout-layout-');

  it('writes many records with one write of the document, keeping the records it already held', async () => {
    const file = path.join(dir(), 'doc.json');
    await writeFile(file, JSON.stringify({ kept: 0 }));
    let writes = 0;
    const layout = documentLayout<number, number>({
      file,
      parse: (text) => (text === undefined ? {} : (JSON.parse(text) as Record<string, number>)),
      text: (records) => {
        writes++;
        return JSON.stringify(records);
      },
    });
    await layout.putAll(new Map(Array.from({ length: 50 }, (_, index) => [`r${index}`, index])));
    expect(writes).toBe(1);
    const written = JSON.parse(await readFile(file, 'utf8')) as Record<string, number>;
    expect(Object.keys(written)).toHaveLength(51);
    expect(written).toMatchObject({ kept: 0, r0: 0, r49: 49 });
  });
});
