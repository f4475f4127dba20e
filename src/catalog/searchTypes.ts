// The shapes of a catalog search: how it is set up (vocabulary, synonyms, weights, the saved index),
// what a search asks for, and what it answers with. search.ts ranks; this file only declares.
import type { LoadoutError } from '../shared/index.js';
import type { CatalogTool } from './catalogTool.js';
import type { FieldWeights, TermMatch } from './lexicalIndex.js';
import type { NameBoostSettings } from './nameBoosts.js';
import type { ToolVocabulary } from './searchText.js';
import type { SavedIndexPort } from './searchIndexFile.js';
import type { AlignmentSettings, WordAlignment } from './semanticIndex.js';

/** Paging and filtering for a catalog search. */
export interface SearchOptions {
  query?: string;
  server?: string;
  limit: number;
  offset: number;
  /** Scores by tool id from an embeddings model (`search.embeddings`), fused as a fourth ranking. */
  modelScores?: ReadonlyMap<string, number>;
}

/** How a catalog search ranks; every part has a default. */
export interface SearchSetup {
  vocabulary?: ToolVocabulary;
  /** The user's synonyms: a query word also searches for these words. */
  synonyms?: ReadonlyMap<string, readonly string[]>;
  /** The word-vector file, or false for word matching only; default: the one shipped with loadout. */
  vectorFile?: string | false;
  /** Told once per catalog when the vectors cannot be loaded (ranking goes on without them). */
  onVectorsUnavailable?: (error: LoadoutError) => void;
  /** Queries remembered from use (query key → tool id → evidence): their tools rank first for the same query. */
  recall?: ReadonlyMap<string, ReadonlyMap<string, number>>;
  fieldWeights?: FieldWeights;
  alignment?: AlignmentSettings;
  fusion?: FusionSettings;
  nameBoosts?: NameBoostSettings;
  /** Where the built index is kept between processes (the data dir's search-index.bin); none: built anew each time. */
  savedIndex?: SavedIndexPort;
}

/**
 * Reciprocal-rank fusion: a tool earns weight / (k + rank) from each ranking it appears in. Ranks,
 * not scores, are fused because BM25 and cosine scores live on unrelated scales.
 */
export interface FusionSettings {
  k: number;
  /** Word matches (BM25F). */
  lexical: number;
  /** Word-vector alignment. */
  semantic: number;
  /** Word matches with each query word expanded to its nearest catalog words. */
  expanded: number;
  /** How many nearest catalog words a query word adds, and the least similarity they need. */
  expansion: { neighbours: number; floor: number };
  /** The embeddings model's ranking, when one is configured. */
  model: number;
  /** The ranking of the tools of the servers a query names (their key, title or product names), by fused score. */
  namedServers: number;
  /**
   * The same ranking for the servers a query only mentions: a word of their name is in it, but an
   * everyday word not used as a name ("What time does my flight land" and the time server).
   */
  mentionedServers: number;
  /**
   * What a word of the built-in request vocabulary ("remember" → memory, store) counts for, relative
   * to the query's own words, in word matches and in meaning alignment; 0 turns the vocabulary off.
   */
  requestWords: number;
  /**
   * For a question ("Which alerts are firing?"), the share added to the fused score of tools that
   * only read: someone asking to be told something rarely wants a tool that changes things.
   */
  questionReadBoost: number;
}

export const DEFAULT_FUSION: FusionSettings = {
  k: 20,
  lexical: 1,
  semantic: 1,
  expanded: 1,
  expansion: { neighbours: 8, floor: 0.4 },
  model: 1.5,
  namedServers: 1,
  mentionedServers: 0.5,
  requestWords: 0.5,
  questionReadBoost: 0.5,
};

/** Why a tool ranked where it did (`loadout search --explain`). */
export interface RankedTool {
  tool: CatalogTool;
  score: number;
  lexical?: { rank: number; score: number; matches: TermMatch[] };
  semantic?: { rank: number; score: number; alignments: WordAlignment[] };
  /** Its place among the tools of the servers the query names (see FusionSettings.namedServers). */
  namedServer?: { rank: number };
  /** Ranked first because an agent chose it after this (or a nearly identical) query: the evidence. */
  recalled?: number;
}

/** A ranked search: the page, the count of tools ranked, and whether the best matched well. */
export interface SearchResult {
  total: number;
  tools: CatalogTool[];
  /** False when a query was given but no tool matched most of it. */
  strong: boolean;
  /** How well the best tool matched, 0–1: the larger of its word coverage and its meaning alignment (at least the alignment once that is strong). */
  confidence: number;
}

/** A ranked search: the query, where to look, the page, and whether to give each hit's reasons. */
export interface RankOptions {
  query: string;
  server?: string | undefined;
  limit: number;
  offset: number;
  modelScores?: ReadonlyMap<string, number> | undefined;
  explain?: boolean;
}

/** A page of a ranking, and how it was made. */
export interface Ranking {
  /** Tools ranked at all (within the server, when one is asked for). */
  total: number;
  hits: RankedTool[];
  strong: boolean;
  confidence: number;
  /** The words searched for: the query's own, its synonyms, and its request-vocabulary words. */
  words: string[];
  /** Whether meaning matches took part (the word vectors loaded). */
  vectors: boolean;
}
