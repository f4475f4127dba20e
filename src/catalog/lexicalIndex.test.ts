// The word-match index: scoring is a sum over terms, so scores of more terms can be added to
// scores already computed (how the expanded ranking reuses the word matches at 10k tools).
import { describe, expect, it } from 'vitest';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { LexicalIndex } from './lexicalIndex.js';
import { stem, toolTextOf, toolWordsOf } from './searchText.js';

describe('LexicalIndex', () => {
  const index = LexicalIndex.build(
    [
      catalogTool('fs', 'read_file', 'Read the complete contents of a file.'),
      catalogTool('fs', 'list_directory', 'List the files of a directory.'),
      catalogTool('chat', 'send_message', 'Send a message to a channel.'),
    ].map((tool) => toolWordsOf(toolTextOf(tool))),
  );

  it('adds the scores of more terms to scores already computed, as scoring them together would', () => {
    const [file, directory, message] = ['file', 'directory', 'message'].map(stem) as [string, string, string];
    const weights = new Map([[directory, 0.4]]);
    const together = index.score([file, directory, message], weights);
    const apart = index.score([directory, message], weights, index.score([file]));
    expect([...apart].map((score) => score.toFixed(9))).toEqual([...together].map((score) => score.toFixed(9)));
    expect(together.filter((score) => score > 0)).toHaveLength(3);
  });
});
