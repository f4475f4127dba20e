// The real servers the check runs, each a package of scripts/real-servers/package.json (pinned by
// its package-lock.json), with what it needs to start offline: arguments, and dummy credentials
// for servers that read a key at start but use it only when a tool is called.

/** What a server's arguments may point at: its own temp dirs. */
export interface ServerContext {
  /** A directory the server may read and write (also the root the client offers). */
  workspace: string;
  /** The temp HOME of this server. */
  home: string;
}

/** One real server of the check. */
export interface RealServer {
  /** Its name in servers.yaml (so `name_tool` through loadout). */
  name: string;
  /** The dependency name in package.json (an npm alias for a second version of a package). */
  package: string;
  /** The entry of the package's `bin` to run, when it has several. */
  bin?: string;
  args?: (context: ServerContext) => string[];
  env?: (context: ServerContext) => Record<string, string>;
  /** Why it is in the list: the case it covers. */
  covers: string;
}

/** A value a server requires at start and sends only to its API, which the check never reaches. */
const DUMMY = 'real-servers-check-dummy';

/** The servers, in the order the table lists them. */
export const REAL_SERVERS: readonly RealServer[] = [
  {
    name: 'everything',
    package: '@modelcontextprotocol/server-everything',
    args: () => ['stdio'],
    covers: 'prompts, resources, templates, paging (SDK 1.x)',
  },
  {
    name: 'everything-legacy',
    package: 'everything-legacy',
    covers: 'prompts, resources, templates on SDK 1.0',
  },
  { name: 'filesystem', package: '@modelcontextprotocol/server-filesystem', args: (c) => [c.workspace], covers: 'roots' },
  {
    name: 'memory',
    package: '@modelcontextprotocol/server-memory',
    // Its default file sits beside its own code, inside the install.
    env: (c) => ({ MEMORY_FILE_PATH: `${c.workspace}/memory.jsonl` }),
    covers: 'tools only',
  },
  {
    name: 'sequential-thinking',
    package: '@modelcontextprotocol/server-sequential-thinking',
    env: () => ({ DISABLE_THOUGHT_LOGGING: 'true' }),
    covers: 'one large tool',
  },
  {
    name: 'postgres',
    package: '@modelcontextprotocol/server-postgres',
    // Nothing listens there: resources/list fails with -32603 as with a database that is down.
    args: () => ['postgresql://127.0.0.1:9/none'],
    covers: 'resources whose list fails (SDK 1.0)',
  },
  {
    name: 'kubernetes',
    package: 'mcp-server-kubernetes',
    covers: 'resources without templates/list (-32601)',
  },
  {
    name: 'hubspot',
    package: '@hubspot/mcp-server',
    env: () => ({ PRIVATE_APP_ACCESS_TOKEN: DUMMY }),
    covers: 'optional lists that fail',
  },
  {
    name: 'playwright',
    package: '@executeautomation/playwright-mcp-server',
    covers: 'resources without templates/list (-32601)',
  },
  {
    name: 'github',
    package: '@modelcontextprotocol/server-github',
    env: () => ({ GITHUB_PERSONAL_ACCESS_TOKEN: DUMMY }),
    covers: 'many tools, zod-to-json-schema (SDK 1.0)',
  },
  {
    name: 'brave-search',
    package: '@modelcontextprotocol/server-brave-search',
    env: () => ({ BRAVE_API_KEY: DUMMY }),
    covers: 'SDK 1.0',
  },
  {
    name: 'aws-kb',
    package: '@modelcontextprotocol/server-aws-kb-retrieval',
    env: () => ({ AWS_ACCESS_KEY_ID: DUMMY, AWS_SECRET_ACCESS_KEY: DUMMY, AWS_REGION: 'us-east-1' }),
    covers: 'SDK 0.5',
  },
  {
    name: 'everart',
    package: '@modelcontextprotocol/server-everart',
    env: () => ({ EVERART_API_KEY: DUMMY }),
    covers: 'SDK 0.5',
  },
  {
    name: 'puppeteer',
    package: '@modelcontextprotocol/server-puppeteer',
    covers: 'resources, no browser needed to list (SDK 1.0)',
  },
  {
    name: 'slack',
    package: '@modelcontextprotocol/server-slack',
    env: () => ({ SLACK_BOT_TOKEN: DUMMY, SLACK_TEAM_ID: DUMMY }),
    covers: 'SDK 1.0',
  },
  {
    name: 'pdf',
    package: '@modelcontextprotocol/server-pdf',
    args: (c) => ['--stdio', c.workspace],
    covers: 'MCP App resources (SDK v2)',
  },
  {
    name: 'system-monitor',
    package: '@modelcontextprotocol/server-system-monitor',
    args: () => ['--stdio'],
    covers: 'MCP App resources (SDK v2)',
  },
  {
    name: 'context7',
    package: '@upstash/context7-mcp',
    args: () => ['--transport', 'stdio'],
    covers: 'SDK v2',
  },
  {
    name: 'firecrawl',
    package: 'firecrawl-mcp',
    env: () => ({ FIRECRAWL_API_KEY: `fc-${DUMMY}` }),
    covers: 'fastmcp',
  },
  { name: 'hello-world', package: 'mcp-hello-world', covers: 'prompts and resources' },
  {
    name: 'tavily',
    package: 'tavily-mcp',
    env: () => ({ TAVILY_API_KEY: `tvly-${DUMMY}` }),
    covers: 'SDK 1.26',
  },
  {
    name: 'notion',
    package: '@notionhq/notion-mcp-server',
    env: () => ({ NOTION_TOKEN: DUMMY }),
    covers: 'tools built from an OpenAPI file',
  },
  {
    name: 'chart',
    package: '@antv/mcp-server-chart',
    args: () => ['--transport', 'stdio'],
    covers: 'large schemas (zod 4)',
  },
  {
    name: 'chrome-devtools',
    package: 'chrome-devtools-mcp',
    bin: 'chrome-devtools-mcp',
    args: () => ['--no-usage-statistics'],
    env: () => ({ CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' }),
    covers: 'bundled SDK',
  },
];
