// What a server is for, in a few broad groups (code hosting, databases, browsers, cloud, chat…),
// so that a map of hundreds of servers can name them all, several on a line, under a heading an
// agent can scan. The groups and their words are written from what kinds of MCP servers exist, not
// from any one catalog; a server is put in the group most of its name and purpose words point to.
import { contentWordsOf, stem } from './searchText.js';

// One group a line: its label, then after ':' the words that point to it.
const TABLE = `
code: git github gitlab bitbucket repository repo branch commit pull merge request codeberg gitea
databases: database sql mysql postgres postgresql sqlite mongodb mongo redis table query schema collection index elasticsearch cosmos bigquery supabase neon pinecone vector
browsers: browser playwright puppeteer selenium chrome devtools page screenshot click navigate tab web automation browserbase
cloud: cloud aws azure gcp gcloud kubernetes k8s cluster pod container docker deploy deployment server hosting droplet heroku vercel netlify cloudflare coolify argocd helm terraform ssh
chat: chat slack teams discord message channel email mail inbox send telegram whatsapp resend outlook
files: file files directory folder drive document docs pdf excel sheet spreadsheet word notion obsidian
memory: memory knowledge graph entity entities note notes observation remember thinking
search: search web scrape crawl fetch url news research perplexity tavily brave google serper searxng firecrawl
tracking: issue issues task tasks project board ticket sprint story stories jira linear asana trello todoist shortcut monday plane cycle epic
monitoring: monitor monitoring log logs metric metrics alert alerts incident trace error errors datadog sentry rollbar observability uptime
design: design figma diagram chart mermaid drawio canvas color component components tailwind css ui icon
`;

/** The label of servers no group fits. */
export const OTHER_GROUP = 'other';

const GROUPS: readonly { label: string; terms: ReadonlySet<string> }[] = TABLE.trim()
  .split('\n')
  .map((line) => {
    const [label = '', words = ''] = line.split(':');
    return { label: label.trim(), terms: new Set(words.trim().split(/\s+/).map(stem)) };
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
