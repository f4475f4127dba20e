// The format of `<data dir>/learned-words.json`, words learned from use, declared once for the
// catalog that learns them and the store that moves them.
import * as z from 'zod';

const EvidenceSchema = z.record(z.string(), z.tuple([z.number(), z.number()]));

/** learned-words.json: tool id → word → [evidence, last seen ms], and query key → tool id alike. */
export const LearnedWordsFileSchema = z.object({
  version: z.literal(1),
  /** tool id → word → [evidence, last seen (ms since epoch)] */
  tools: z.record(z.string(), EvidenceSchema),
  /** query key (its sorted stems) → tool id → [evidence, last seen] */
  queries: z.record(z.string(), EvidenceSchema).optional(),
});
export type LearnedWordsFile = z.infer<typeof LearnedWordsFileSchema>;

/** The text of learned-words.json, as loadout writes it. */
export function learnedWordsFileText(file: LearnedWordsFile): string {
  return `${JSON.stringify(file)}\n`;
}
