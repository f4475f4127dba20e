// The learned search words in the team store (`--store`): one record (LEARNED_WORDS_KEY) holding
// what learned-words.json holds. Each record() is the store's read-modify-write, retried on a
// concurrent write, so replicas learning at once never lose each other's evidence.
import type { LearnedWordsFile } from '../config/index.js';
import { LEARNED_WORDS_KEY, type RecordCollection } from '../store/index.js';
import { noLearnedWords, type LearnedWordsSource } from './learnedWords.js';

/** The store's learned-words record as a LearnedWordsSource (the store checks it whole on read and write). */
export function storedLearnedWords(records: RecordCollection<LearnedWordsFile>): LearnedWordsSource {
  return {
    read: async () => (await records.get(LEARNED_WORDS_KEY))?.value ?? noLearnedWords(),
    async update(change) {
      await records.update(LEARNED_WORDS_KEY, (current) => change(current ?? noLearnedWords()));
    },
  };
}
