// What a server is for, in a few broad groups (code hosting, databases, browsers, cloud, chat…),
// so that a map of hundreds of servers can name them all, several on a line, under a heading an
// agent can scan. The groups and their words are written from what kinds of MCP servers exist, not
// from any one catalog; a server is put in the group most of its name and purpose words point to.
import { PRODUCT_WORDS_BY_GROUP } from './productNames.js';
import { contentWordsOf, stem } from './searchText.js';

// One group a line: its label, then after ':' the words that point to it; the products of each
// group (productNames.ts) point to it too.
const TABLE = `
code: git repository repo branch commit pull merge request
databases: database sql table query schema collection index vector
browsers: browser chrome devtools page screenshot click navigate tab web automation
cloud: cloud cluster pod container deploy deployment server hosting droplet ssh
chat: chat teams message channel email mail inbox send
files: file files directory folder drive document docs pdf excel sheet spreadsheet word
memory: memory knowledge graph entity entities note notes observation remember thinking
search: search web scrape crawl fetch url news research google
tracking: issue issues task tasks project board ticket sprint story stories cycle epic
monitoring: monitor monitoring log logs metric metrics alert alerts incident trace error errors observability uptime
design: design diagram chart canvas color component components css ui icon
`;

/** The label of servers no group fits. */
const OTHER_GROUP = 'other';

const GROUPS: readonly { label: string; terms: ReadonlySet<string> }[] = TABLE.trim()
  .split('\n')
  .map((line) => {
    const [label = '', words = ''] = line.split(':');
    const products = PRODUCT_WORDS_BY_GROUP.get(label.trim()) ?? [];
    return { label: label.trim(), terms: new Set([...words.trim().split(/\s+/), ...products].map(stem)) };
  });

/** The group whose words a server's name and purpose say most; OTHER_GROUP when none. */
export function groupOf(server: string, purpose: string): string {
  const terms = [...contentWordsOf(server), ...contentWordsOf(server), ...contentWordsOf(purpose)].map(stem);
  let best = OTHER_GROUP;
  let bestCount = 0;
  for (const { label, terms: words } of GROUPS) {
    const count = terms.filter((term) => words.has(term)).length;
    if (count > bestCount) [best, bestCount] = [label, count];
  }
  return best;
}

/** The group labels in map order (the fixed groups, then other). */
export const GROUP_ORDER: readonly string[] = [...GROUPS.map((group) => group.label), OTHER_GROUP];
