// The products search knows, declared once: their names, so that a query that says one also searches
// for the others ("Google Cloud" finds the gcp server, "Postgres" the postgresql one, "monday.com"
// the monday one) and a product no server offers makes a weak answer; and the group of servers each
// belongs to, for the map (serverGroups.ts). Written from how the products are commonly called, not
// from any catalog's tools or any test set's answers. A server's own title and description also
// count as its names (they are searched with its tools), so this list only needs the names a server
// may not say itself.
import { wordsOf } from './searchText.js';

// One group of servers a line (see serverGroups.ts; "other" is no group), then its products,
// separated by ';', each as its names, comma-separated; a name may be several words. A query word
// that names a product no configured server offers makes any answer a weak one, unless the name is
// marked '~': it is also an everyday word ("resend the invite", "zoom in", "on monday"), which alone
// says nothing about what is missing.
const TABLE = `
code: github, gh; gitlab; bitbucket; codeberg; gitea
databases: postgres, postgresql, psql, pg; mysql, mariadb; sqlite, sqlite3; mongodb, mongo; redis; elasticsearch, ~elastic; ~cosmos; bigquery, big query, bq; supabase; ~neon; pinecone; snowflake; databricks
browsers: playwright; puppeteer; selenium; browserbase
cloud: gcp, google cloud, gcloud; aws, amazon web services; azure, microsoft azure; kubernetes, k8s, kubectl; docker; heroku; vercel; netlify; cloudflare, cf; coolify; argocd; ~helm; terraform; ansible; digitalocean, digital ocean; firebase
chat: slack; msteams, microsoft teams; discord; telegram; whatsapp; ~resend; ~outlook, microsoft outlook; gmail, google mail; twilio; sendgrid; mailchimp; ~zoom
files: ~notion; obsidian; gdrive, google drive; dropbox; onedrive; sharepoint; confluence, atlassian confluence; evernote
search: perplexity; tavily; ~brave; serper; searxng; firecrawl; gsc, google search console, search console
tracking: jira, atlassian jira; ~linear; asana; trello; todoist; ~shortcut; ~monday, monday.com; ~plane; clickup; basecamp; wrike
monitoring: datadog; sentry; rollbar; pagerduty; grafana; prometheus
design: figma; ~mermaid; drawio; tailwind; miro; canva
other: ms365, m365, microsoft 365, office 365, office365; circleci, circle ci; jenkins; kafka; youtube, yt; salesforce, sfdc; openai, chatgpt; anthropic, claude; stripe; hubspot; shopify; spotify; ~box; zendesk; intercom; airtable; twitter; instagram; facebook; linkedin; reddit; webflow; wordpress; quickbooks; xero; paypal; ~square; okta; auth0; ~segment; mixpanel; ~amplitude; calendly; typeform
`;

/** A product's names, each as its words, the group of servers it belongs to, and which names are everyday words. */
interface Product {
  group: string;
  names: string[][];
  everyday: ReadonlySet<string>;
}

const PRODUCTS: readonly Product[] = TABLE.trim()
  .split('\n')
  .flatMap((line) => {
    const [group = '', products = ''] = line.split(':');
    return products.split(';').map((product) => {
      const names = product.split(',').map((name) => name.trim());
      return {
        group: group.trim(),
        names: names.map((name) => wordsOf(name).filter((word) => word !== 'com')),
        everyday: new Set(names.filter((name) => name.startsWith('~')).map((name) => name.slice(1))),
      };
    });
  });

/** Each name's words (joined) → the words of the product's other names. */
const ALIASES: ReadonlyMap<string, readonly string[]> = aliasesOf(PRODUCTS);
/** The longest name, in words. */
const LONGEST = 4;

function aliasesOf(products: readonly Product[]): Map<string, string[]> {
  const aliases = new Map<string, string[]>();
  for (const { names } of products) {
    if (names.length < 2) continue;
    for (const name of names) {
      const others = names.filter((other) => other !== name).flat();
      aliases.set(name.join(' '), [...new Set(others.filter((word) => !name.includes(word)))]);
    }
  }
  return aliases;
}

/** The other names' words of every product the query's words name (as a run of words). */
export function productAliasesOf(words: readonly string[]): string[] {
  const found = new Set<string>();
  for (let start = 0; start < words.length; start++) {
    for (let length = 1; length <= LONGEST && start + length <= words.length; length++) {
      for (const word of ALIASES.get(words.slice(start, start + length).join(' ')) ?? []) found.add(word);
    }
  }
  return [...found];
}

/** The one-word names of the products of each group of servers (code, databases, …; not "other"). */
export const PRODUCT_WORDS_BY_GROUP: ReadonlyMap<string, readonly string[]> = new Map(
  [...new Set(PRODUCTS.map((product) => product.group))]
    .filter((group) => group !== 'other')
    .map((group) => [group, PRODUCTS.filter((product) => product.group === group).flatMap(oneWordNames)]),
);

/** Words that only name a product (its one-word names but the everyday ones), for telling a request for it apart from plain words. */
export const PRODUCT_WORDS: ReadonlySet<string> = new Set(
  PRODUCTS.flatMap((product) => oneWordNames(product).filter((word) => !product.everyday.has(word))),
);

/** The one-word names that are also everyday words ('~' above: "plane", "monday", "notion"). */
export const EVERYDAY_PRODUCT_WORDS: ReadonlySet<string> = new Set(PRODUCTS.flatMap((product) => [...product.everyday]));

function oneWordNames({ names }: Product): string[] {
  return names.filter((name) => name.length === 1).map(([word]) => word!);
}
