// The network allow-lists `setup` and `init` propose for the servers whose hosts loadout knows: a
// comment above the server's entry in servers.yaml, never the entry itself, since a sandbox is the
// user's choice (and a server's hosts may change with its version). Known by the package its
// `npx`/`uvx` runs, plus the registry that command fetches it from.
import type { Document } from 'yaml';
import { yamlModule } from '../shared/index.js';

/** Hosts each package's own code reaches; [] for a server that needs no network. */
const KNOWN_HOSTS: Readonly<Record<string, readonly string[]>> = {
  '@modelcontextprotocol/server-github': ['api.github.com'],
  '@modelcontextprotocol/server-gitlab': ['gitlab.com'],
  '@modelcontextprotocol/server-slack': ['slack.com'],
  '@modelcontextprotocol/server-brave-search': ['api.search.brave.com'],
  '@modelcontextprotocol/server-google-maps': ['maps.googleapis.com'],
  '@notionhq/notion-mcp-server': ['api.notion.com'],
  'exa-mcp-server': ['api.exa.ai'],
  'tavily-mcp': ['api.tavily.com'],
  '@modelcontextprotocol/server-memory': [],
  '@modelcontextprotocol/server-filesystem': [],
  '@modelcontextprotocol/server-sequential-thinking': [],
  '@modelcontextprotocol/server-everything': [],
  'mcp-server-time': [],
  'mcp-server-git': [],
  'mcp-server-sqlite': [],
};

// Where each launcher fetches the package from on a start with an empty cache.
const REGISTRY_HOSTS: Readonly<Record<string, readonly string[]>> = {
  npx: ['registry.npmjs.org'],
  uvx: ['pypi.org', 'files.pythonhosted.org'],
};

/** The allow-list proposed for a stdio entry (`command`, `args` as servers.yaml has them), with the package it is known by. */
export function proposedAllowList(server: unknown): { pkg: string; allow: string[] } | undefined {
  if (typeof server !== 'object' || server === null) return undefined;
  const { command, args } = server as { command?: unknown; args?: unknown };
  const launcher = typeof command === 'string' ? command.split(/[\\/]/).pop()! : undefined;
  const registry = launcher === undefined ? undefined : REGISTRY_HOSTS[launcher];
  if (!registry || !Array.isArray(args)) return undefined;
  // The package is the first argument that is not a flag, without a version (`pkg@1.2.3`, `@scope/pkg@latest`).
  const spec = args.find((arg): arg is string => typeof arg === 'string' && !arg.startsWith('-'));
  const pkg = spec?.replace(/(?!^)@[^/]*$/, '');
  const hosts = pkg === undefined ? undefined : KNOWN_HOSTS[pkg];
  return hosts && { pkg: pkg!, allow: [...hosts, ...registry] };
}

/** Puts the proposal for server `name` of `document` above its entry, as a comment (see the header). */
export function proposeSandbox(document: Document, name: string): void {
  const yaml = yamlModule();
  const servers = document.get('servers');
  if (!yaml.isMap(servers)) return;
  const pair = servers.items.find((item) => (yaml.isScalar(item.key) ? item.key.value : item.key) === name);
  const proposal = pair && proposedAllowList(yaml.isNode(pair.value) ? pair.value.toJSON() : pair.value);
  if (!pair || !proposal) return;
  if (!yaml.isScalar(pair.key)) pair.key = document.createNode(name);
  (pair.key as { commentBefore?: string | null }).commentBefore =
    ` ${proposal.pkg} reaches only these hosts: add under ${name} to sandbox it (docs/sandbox.md):\n` +
    `   sandbox: { network: { allow: [${proposal.allow.join(', ')}] } }`;
}
