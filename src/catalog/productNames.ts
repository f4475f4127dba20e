// Products known by more than one name: a query that says one of them also searches for the
// others ("Google Cloud" finds the gcp server, "Postgres" the postgresql one, "monday.com" the
// monday one). Written from how the products are commonly called, not from any catalog's tools or
// any test set's answers. A server's own title and description also count as its names (they are
// searched with its tools), so this list only needs the names a server may not say itself.
import { wordsOf } from './searchText.js';

// One product a line: its names, comma-separated; a name may be several words.
const TABLE = `
gcp, google cloud, gcloud
aws, amazon web services
azure, microsoft azure
postgres, postgresql, psql, pg
mysql, mariadb
mongodb, mongo
kubernetes, k8s, kubectl
github, gh
monday, monday.com
ms365, m365, microsoft 365, office 365, office365
outlook, microsoft outlook
msteams, microsoft teams
gdrive, google drive
gmail, google mail
gsc, google search console, search console
bigquery, big query, bq
elasticsearch, elastic
sqlite, sqlite3
jira, atlassian jira
confluence, atlassian confluence
circleci, circle ci
digitalocean, digital ocean
cloudflare, cf
youtube, yt
salesforce, sfdc
openai, chatgpt
anthropic, claude
`;

// Products people name in a request that have one name only; with the table's, a query word
// that names a product no configured server offers makes any answer a weak one.
const SINGLE_NAMES =
  'slack discord notion linear asana trello jira github gitlab figma stripe hubspot salesforce zoom dropbox box spotify shopify ' +
  'twilio sendgrid mailchimp zendesk intercom airtable clickup basecamp whatsapp telegram twitter instagram facebook linkedin ' +
  'reddit youtube gmail outlook sharepoint onedrive confluence bitbucket datadog sentry pagerduty grafana prometheus vercel ' +
  'netlify heroku supabase firebase snowflake databricks redis mongodb mysql postgres sqlite kafka jenkins circleci docker ' +
  'kubernetes terraform ansible cloudflare aws azure gcp openai anthropic perplexity tavily brave todoist evernote obsidian ' +
  'monday wrike miro canva calendly typeform webflow wordpress quickbooks xero paypal square okta auth0 segment mixpanel amplitude';

/** Each name's words (joined) → the words of the product's other names. */
const ALIASES: ReadonlyMap<string, readonly string[]> = parseTable(TABLE);
/** The longest name, in words. */
const LONGEST = 4;

function parseTable(table: string): Map<string, string[]> {
  const aliases = new Map<string, string[]>();
  for (const line of table.trim().split('\n')) {
    const names = line.split(',').map((name) => wordsOf(name.trim()).filter((word) => word !== 'com'));
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

/** Words that name a product (any of its names' words), for telling a request for it apart from plain words. */
export const PRODUCT_WORDS: ReadonlySet<string> = new Set([
  ...SINGLE_NAMES.split(' '),
  ...[...ALIASES.keys()].filter((name) => !name.includes(' ')),
]);
