import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileStore } from '../store/index.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { StoredToolsets } from './storedToolsets.js';

describe('StoredToolsets', () => {
  const tempDir = useTempDir('loadout-stored-toolsets-');

  it('saves a toolset whole: its prompts are kept, as the toolset files keep them', async () => {
    const store = await openFileStore({
      dataDir: path.join(tempDir(), 'data'),
      toolsetsDir: path.join(tempDir(), 'toolsets'),
      listen: false,
    });
    try {
      const toolsets = new StoredToolsets(store.toolsets);
      const review = { name: 'review', description: 'Code review', tools: ['github.get_pr'], prompts: ['github.review'] };
      await toolsets.save(review);
      expect(await toolsets.get('review')).toEqual(review);
    } finally {
      await store.close();
    }
  });
});
