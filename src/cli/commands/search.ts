// `loadout search QUERY…`: the catalog ranked for a query as discover-all-tools ranks it, and with
// --explain which fields and words earned each tool its place.
import type { Command } from 'commander';
import { rank, type Catalog, type RankedTool, type Ranking } from '../../catalog/index.js';
import { Policy } from '../../identity/index.js';
import { LoadoutError, oneLine } from '../../shared/index.js';
import { enabledServerNames, type ServerProblem } from '../../config/index.js';
import { openConfiguredRuntime, requireServer, undiscoveredText } from '../configView.js';
import { paint, printJson, printLines, printNote } from '../output.js';
import { commandEnvironment, openCommandStore } from '../program.js';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 500;

/** Register `search` on the program. */
export function registerSearch(program: Command): void {
  program
    .command('search')
    .description("rank the catalog's tools for a task in your words, as discover-all-tools does")
    // Every word is the query: no subcommand can take one (`loadout search enrich` searches for
    // "enrich"), and after `--` even words that look like options are.
    .argument('<query...>', 'what you want to do, e.g. read a file')
    .option('--limit <n>', `how many tools (1–${MAX_LIMIT})`, String(DEFAULT_LIMIT))
    .option('--server <server>', "only this server's tools")
    .option('--explain', 'show which fields and words made each score')
    .option('--json', 'machine-readable output')
    .action(async (words: string[], options: { limit: string; server?: string; explain?: boolean; json?: boolean }, command: Command) => {
      const query = words.join(' ');
      const blank = !query.trim();
      const limit = Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        throw new LoadoutError('INVALID_ARGUMENT', `--limit must be a whole number from 1 to ${MAX_LIMIT}, got '${options.limit}'`);
      }
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const runtime = await openConfiguredRuntime(paths, logger, await openCommandStore(storeUrl, logger));
      let catalog: Catalog;
      let explained: Ranking;
      // Searched as the local caller (policy.local) may see the catalog.
      const policy = new Policy(runtime.config.policy);
      const grants = policy.grantsFor(policy.localPrincipal);
      const inScope = (server: string) => (options.server === undefined || server === options.server) && (grants?.server(server) ?? true);
      let configured: number;
      let undiscovered: string[];
      let problems: Map<string, ServerProblem>;
      try {
        if (options.server !== undefined) requireServer(runtime.config, options.server, runtime.brokenServers);
        // The catalog discover-all-tools ranks: keywords, synonyms, learned words, examples, promotions.
        await runtime.catalog.ensureLoaded();
        catalog = grants ? runtime.catalog.current.restrictedTo(grants) : runtime.catalog.current;
        problems = new Map([...runtime.catalog.serverProblems()].filter(([server]) => inScope(server)));
        // An invalid entry counts among the servers (it is configured), and is named with its fix.
        configured =
          enabledServerNames(runtime.pool.configs).filter(inScope).length +
          [...problems.values()].filter((problem) => problem.code === 'CONFIG_INVALID').length;
        undiscovered = runtime.catalog.undiscoveredServers.filter(inScope);
        const source = { current: catalog, modelScores: (text: string) => runtime.catalog.modelScores(text) };
        // A blank query is no query, as discover-all-tools takes it: the tools in catalog order.
        explained = blank
          ? listedInOrder(catalog.search({ server: options.server, limit, offset: 0 }))
          : await rank(source, { query, server: options.server, limit, explain: options.explain === true });
      } finally {
        await runtime.close();
      }
      const ranked = explained.hits;
      if (options.json) {
        printJson({
          query,
          words: explained.words,
          strong: explained.strong,
          vectors: explained.vectors,
          tools: ranked.map((hit) => jsonOf(hit, options.explain === true)),
          undiscovered,
          problems: Object.fromEntries(problems),
        });
        return;
      }
      // Tools of a server not discovered yet cannot match: say that, never a bare "no match".
      const missing = undiscovered.length || problems.size ? undiscoveredText(undiscovered, configured, problems) : undefined;
      if (missing && !catalog.visible().some((tool) => inScope(tool.server))) {
        printLines(`No tools to search yet: ${missing}`);
        return;
      }
      if (blank)
        printLines(
          `No query: ${explained.total} tool${explained.total === 1 ? '' : 's'} in catalog order; words rank them, e.g. loadout search "read a file"`,
        );
      else if (!explained.vectors) printNote('word vectors unavailable: ranking by word matches only');
      if (!ranked.length) {
        printLines(`No tool matches "${query}". List a server's tools with: loadout list --server NAME`, ...(missing ? [missing] : []));
        return;
      }
      if (!explained.strong)
        printLines(
          paint('yellow', 'No tool matches this strongly; these are the closest. Browse a server with: loadout list --server NAME'),
        );
      ranked.forEach((hit, index) => {
        printLines(`${String(index + 1).padStart(3)}. ${hit.tool.id} — ${oneLine(hit.tool.description, 100) || '(no description)'}`);
        if (options.explain) printLines(...reasonsOf(hit).map((reason) => `       ${paint('dim', reason)}`));
      });
      if (missing) printLines(missing);
    });
}

// The unranked page as a ranking with nothing to explain, so both print alike.
function listedInOrder({ total, tools }: ReturnType<Catalog['search']>): Ranking {
  return { total, hits: tools.map((tool) => ({ tool, score: 0 })), strong: true, confidence: 1, words: [], vectors: true };
}

function reasonsOf(hit: RankedTool): string[] {
  const reasons = [`fused score ${hit.score.toFixed(4)}`];
  if (hit.lexical) {
    const matches = hit.lexical.matches.map((match) => `${match.term} (${match.fields.join(', ')})`).join('; ');
    reasons.push(`word matches: rank ${hit.lexical.rank}, BM25F ${hit.lexical.score.toFixed(2)}${matches ? ` — ${matches}` : ''}`);
  }
  if (hit.semantic) {
    const alignments = hit.semantic.alignments
      .map((alignment) => `${alignment.word}≈${alignment.closest} ${alignment.similarity}`)
      .join('; ');
    reasons.push(`meaning: rank ${hit.semantic.rank}, alignment ${hit.semantic.score.toFixed(3)}${alignments ? ` — ${alignments}` : ''}`);
  }
  if (hit.namedServer) reasons.push(`server named in the query: rank ${hit.namedServer.rank} among its tools`);
  return reasons;
}

function jsonOf(hit: RankedTool, explain: boolean): Record<string, unknown> {
  return {
    tool: hit.tool.id,
    description: hit.tool.description,
    score: hit.score,
    ...(explain ? { lexical: hit.lexical, semantic: hit.semantic, namedServer: hit.namedServer } : {}),
  };
}
