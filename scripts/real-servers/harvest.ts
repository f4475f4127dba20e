// Harvesting `tools/list` (and what each server says about itself) from many real npm servers
// into one catalog file, the shape of the search dev sets' catalog.json. The packages are
// installed beforehand, one folder each, under DIR/pkgs/ (a failing install stays local):
//   mkdir -p DIR/pkgs/NAME && cd DIR/pkgs/NAME && npm install --ignore-scripts PACKAGE
// Each server starts with dummy credentials under a string of common variable names: most read
// their key at start and use it only when a tool is called. Servers that do not answer in time,
// or need a real account to list, are left out and reported.
//   node dist/scripts/real-servers/harvest.js --dir DIR --list packages.txt --out catalog.json [--timeout SECONDS]
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CLIENT_CAPABILITIES } from '../../src/downstream/index.js';
import { RawClient, errorText } from './rawClient.js';

const { values: options } = parseArgs({
  options: { dir: { type: 'string' }, list: { type: 'string' }, out: { type: 'string' }, timeout: { type: 'string', default: '25' } },
});
if (!options.dir || !options.list || !options.out) {
  console.error('usage: harvest --dir DIR --list packages.txt --out catalog.json [--timeout SECONDS]');
  process.exit(2);
}
const timeoutMs = Number(options.timeout) * 1000;

// A dummy for each name servers commonly read a credential or endpoint from.
const DUMMY = 'harvest-dummy-0123456789abcdef';
const DUMMY_ENV_NAMES = (
  'API_KEY API_TOKEN ACCESS_TOKEN AUTH_TOKEN TOKEN SECRET CLIENT_ID CLIENT_SECRET GITHUB_PERSONAL_ACCESS_TOKEN GITHUB_TOKEN ' +
  'GITLAB_PERSONAL_ACCESS_TOKEN SLACK_BOT_TOKEN SLACK_TEAM_ID NOTION_TOKEN NOTION_API_KEY STRIPE_SECRET_KEY SENTRY_AUTH_TOKEN ' +
  'LAUNCHDARKLY_API_KEY DATADOG_API_KEY DD_API_KEY DD_APP_KEY DATADOG_APP_KEY TAVILY_API_KEY FIRECRAWL_API_KEY BRAVE_API_KEY ' +
  'PERPLEXITY_API_KEY SHORTCUT_API_TOKEN APIFY_TOKEN LINEAR_API_KEY ASANA_ACCESS_TOKEN TRELLO_API_KEY TRELLO_TOKEN ' +
  'TODOIST_API_TOKEN MONDAY_TOKEN MONDAY_API_TOKEN HUBSPOT_ACCESS_TOKEN PRIVATE_APP_ACCESS_TOKEN PINECONE_API_KEY REPLICATE_API_TOKEN ' +
  'FIGMA_API_KEY FIGMA_ACCESS_TOKEN RESEND_API_KEY HEROKU_API_KEY VERCEL_API_TOKEN NEON_API_KEY DIGITALOCEAN_API_TOKEN ' +
  'CLOUDFLARE_API_TOKEN SUPABASE_ACCESS_TOKEN ATTIO_API_KEY COINGECKO_API_KEY TELNYX_API_KEY JINA_API_KEY SERPER_API_KEY ' +
  'HEVY_API_KEY ROLLBAR_ACCESS_TOKEN SONARQUBE_TOKEN METABASE_API_KEY BROWSERBASE_API_KEY BROWSERBASE_PROJECT_ID ' +
  'BRIGHTDATA_API_TOKEN API_TOKEN_BRIGHTDATA MAPBOX_ACCESS_TOKEN AMAP_MAPS_API_KEY XERO_CLIENT_ID XERO_CLIENT_SECRET ' +
  'CIRCLECI_TOKEN CODACY_ACCOUNT_TOKEN JIRA_API_TOKEN JIRA_EMAIL CONFLUENCE_API_TOKEN BITBUCKET_TOKEN ATLASSIAN_API_TOKEN ' +
  'AZURE_DEVOPS_PAT ARGOCD_API_TOKEN COOLIFY_ACCESS_TOKEN PLANE_API_KEY PLANE_WORKSPACE_SLUG BACKLOG_API_KEY ' +
  'LINE_CHANNEL_ACCESS_TOKEN HOSTINGER_API_TOKEN API_TOKEN_HOSTINGER CURRENTS_API_KEY BROWSERSTACK_USERNAME BROWSERSTACK_ACCESS_KEY ' +
  'INSTANT_APP_ADMIN_TOKEN VARIFLIGHT_API_KEY PAPERLESS_API_KEY JENKINS_API_TOKEN JENKINS_USER OPENAI_API_KEY ELASTICSEARCH_API_KEY ' +
  'EMAIL_USERNAME EMAIL_PASSWORD SMTP_HOST IMAP_HOST FLIGHTRADAR_API_KEY MS365_CLIENT_ID'
).split(' ');
const DUMMY_URLS: Record<string, string> = {
  DATABASE_URL: 'postgresql://127.0.0.1:9/none',
  POSTGRES_URL: 'postgresql://127.0.0.1:9/none',
  MDB_MCP_CONNECTION_STRING: 'mongodb://127.0.0.1:9/none',
  MONGODB_URI: 'mongodb://127.0.0.1:9/none',
  REDIS_URL: 'redis://127.0.0.1:9',
  ELASTICSEARCH_URL: 'http://127.0.0.1:9',
  ES_URL: 'http://127.0.0.1:9',
  JIRA_URL: 'http://127.0.0.1:9',
  JIRA_HOST: 'http://127.0.0.1:9',
  CONFLUENCE_URL: 'http://127.0.0.1:9',
  BITBUCKET_URL: 'http://127.0.0.1:9',
  JENKINS_URL: 'http://127.0.0.1:9',
  SONARQUBE_URL: 'http://127.0.0.1:9',
  METABASE_URL: 'http://127.0.0.1:9',
  ARGOCD_BASE_URL: 'http://127.0.0.1:9',
  COOLIFY_BASE_URL: 'http://127.0.0.1:9',
  PAPERLESS_URL: 'http://127.0.0.1:9',
  SEARXNG_URL: 'http://127.0.0.1:9',
  MYSQL_HOST: '127.0.0.1',
  MYSQL_PORT: '9',
  MYSQL_USER: 'none',
  MYSQL_DB: 'none',
  PG_HOST: '127.0.0.1',
  GOOGLE_CLOUD_PROJECT: 'none',
  AZURE_DEVOPS_ORG_URL: 'http://127.0.0.1:9',
  AZURE_DEVOPS_ORG: 'none',
  AZURE_DEVOPS_AUTH_METHOD: 'pat',
};

const ARGUMENT_TRIES: readonly ((home: string) => string[])[] = [() => [], (home) => [home], () => ['--stdio'], () => ['stdio']];

interface Harvested {
  package: string;
  version: string;
  about?: { title?: string; description?: string; instructions?: string };
  tools: unknown[];
}

const scratch = path.resolve(options.dir);
const packages = readFileSync(options.list, 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const servers: Record<string, Harvested> = {};
const failures: string[] = [];
for (const name of packages) {
  const folder = path.join(scratch, 'pkgs', name.replace(/[/@]/g, '_'));
  const packageDir = path.join(folder, 'node_modules', name);
  if (!existsSync(path.join(folder, '.done')) || !existsSync(packageDir)) {
    failures.push(`${name}: not installed`);
    continue;
  }
  const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as {
    version?: string;
    bin?: string | Record<string, string>;
  };
  const bins = typeof manifest.bin === 'string' ? { [name]: manifest.bin } : (manifest.bin ?? {});
  const entry = Object.values(bins)[0];
  if (!entry) {
    failures.push(`${name}: no bin`);
    continue;
  }
  const started = performance.now();
  // No arguments first; then a directory (filesystem-like servers), then the flag some servers need for stdio.
  let outcome: Awaited<ReturnType<typeof harvest>> | string = 'not started';
  for (const args of ARGUMENT_TRIES) {
    outcome = await harvest(path.join(packageDir, entry), args).catch((error: unknown) => errorText(error));
    if (typeof outcome !== 'string') break;
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (typeof outcome === 'string' || outcome.tools.length === 0) {
    failures.push(`${name}: ${typeof outcome === 'string' ? outcome : 'no tools'}`);
    console.error(`FAIL ${name} (${seconds} s): ${typeof outcome === 'string' ? outcome.slice(0, 160) : 'no tools'}`);
    continue;
  }
  const key = uniqueKey(serverKeyOf(name), servers);
  servers[key] = {
    package: name,
    version: manifest.version ?? '?',
    ...(Object.keys(outcome.about).length ? { about: outcome.about } : {}),
    tools: outcome.tools,
  };
  console.error(`ok   ${key} ← ${name} (${outcome.tools.length} tools, ${seconds} s)`);
  // Written after each server: a harvest stopped midway keeps what it had.
  writeFileSync(options.out, `${JSON.stringify({ servers }, null, 1)}\n`);
}
writeFileSync(options.out, `${JSON.stringify({ servers }, null, 1)}\n`);
const toolCount = Object.values(servers).reduce((sum, server) => sum + server.tools.length, 0);
console.error(`${Object.keys(servers).length} servers, ${toolCount} tools; ${failures.length} left out`);
for (const failure of failures) console.error(`  left out: ${failure.slice(0, 200)}`);

async function harvest(
  entry: string,
  argsOf: (home: string) => string[],
): Promise<{ about: Harvested['about'] & object; tools: unknown[] }> {
  const home = mkdtempSync(path.join(tmpdir(), 'harvest-home-'));
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: home, ...DUMMY_URLS };
  for (const variable of DUMMY_ENV_NAMES) env[variable] = DUMMY;
  // The request timeout bounds the handshake and each list page (a silent server fails, never hangs).
  const client = await RawClient.connect({
    command: process.execPath,
    args: [entry, ...argsOf(home)],
    env,
    cwd: home,
    capabilities: CLIENT_CAPABILITIES,
    root: home,
    requestTimeoutMs: timeoutMs,
  });
  try {
    const listed = await client.list('tools');
    if (!listed.ok) throw new Error(`tools/list failed: ${listed.error}`);
    return { about: client.about, tools: listed.items };
  } finally {
    await client.close();
  }
}

/** The name a user would give the server in servers.yaml: the package's own name less "mcp" and "server". */
function serverKeyOf(name: string): string {
  const base = name.split('/').pop()!;
  const words = base.split(/[-_.]+/).filter((word) => !['mcp', 'server', 'mcpserver', 'official'].includes(word.toLowerCase()));
  const key = words.join('-').replace(/mcp$/i, '').toLowerCase();
  return key || name.replace(/^@/, '').split('/')[0]!.toLowerCase();
}

function uniqueKey(key: string, taken: Record<string, unknown>): string {
  let candidate = key;
  for (let n = 2; candidate in taken; n++) candidate = `${key}-${n}`;
  return candidate;
}
