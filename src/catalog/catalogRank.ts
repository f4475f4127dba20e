// The one ranking of the catalog for a request, what discover-all-tools and `loadout search` both
// answer with: the catalog's own ranking (word and meaning matches, learned words, queries
// remembered from use) with the embeddings model's scores folded in when one is configured, and
// the asking session's query remembered, so that the tools it then uses learn its words.
import type { Catalog } from './catalog.js';
import type { Ranking } from './searchTypes.js';

/** A ranked search of the catalog. */
export interface RankRequest {
  query: string;
  /** Only this server's tools (ranked among themselves). */
  server?: string | undefined;
  limit: number;
  offset?: number;
  /** Give each hit's reasons (`loadout search --explain`). */
  explain?: boolean;
  /** The session asking, whose next use of a shown tool teaches the query's words; none for the CLI. */
  searcher?: object;
}

/** What ranking needs of the catalog store. */
export interface RankSource {
  readonly current: Catalog;
  modelScores(query: string): Promise<ReadonlyMap<string, number> | undefined>;
  readonly learning?: { queried(session: object, query: string, shown: readonly string[]): void } | undefined;
}

/** Rank the current catalog for `request`. */
export async function rank(source: RankSource, request: RankRequest): Promise<Ranking> {
  const modelScores = await source.modelScores(request.query);
  // The catalog of the answer is the one current once the model answered (it may have been replaced meanwhile).
  const ranking = source.current.rank({
    query: request.query,
    server: request.server,
    limit: request.limit,
    offset: request.offset ?? 0,
    modelScores,
    explain: request.explain ?? false,
  });
  if (request.searcher)
    source.learning?.queried(
      request.searcher,
      request.query,
      ranking.hits.map((hit) => hit.tool.id),
    );
  return ranking;
}
