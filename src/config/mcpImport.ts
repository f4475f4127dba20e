// Import of MCP servers from other clients' configs (`{"mcpServers": {...}}`: Claude Code's
// .mcp.json and ~/.claude.json, Claude Desktop, Cursor) into a new servers.yaml. Never overwrites
// an existing servers.yaml. The home directory is a parameter so tests use a temporary one.
import path from 'node:path';
import * as z from 'zod';
import { LoadoutError, errorMessage, firstIssueText, yamlModule } from '../shared/index.js';
import { proposeSandbox } from './sandboxProposals.js';
import { ServerConfigSchema } from './schema.js';
import { SERVERS_FILE_MODE } from './serversFile.js';
import { readTextIfExists, withFileLock, writeTextAtomic } from './safeWrite.js';

/** A config file that may hold MCP servers. */
export interface ImportSource {
  /** How the human knows it, e.g. "Claude Desktop". */
  label: string;
  file: string;
}

/** Servers found in the sources, ready for servers.yaml, and what was left out. */
export interface ImportResult {
  servers: Record<string, Record<string, unknown>>;
  /** Each source that held servers, with the names taken from it. */
  found: Array<{ source: ImportSource; servers: string[] }>;
  skipped: Array<{ source: ImportSource; name: string; reason: string }>;
}

/** Where the usual clients keep their MCP servers, in order of precedence. */
export function defaultImportSources(options: { home: string; cwd: string; platform?: NodeJS.Platform; appData?: string }): ImportSource[] {
  const { home, cwd } = options;
  const platform = options.platform ?? process.platform;
  const desktopDir =
    platform === 'darwin'
      ? path.join(home, 'Library', 'Application Support', 'Claude')
      : platform === 'win32'
        ? path.join(options.appData ?? path.join(home, 'AppData', 'Roaming'), 'Claude')
        : path.join(home, '.config', 'Claude');
  return [
    { label: 'Claude Code project (.mcp.json)', file: path.join(cwd, '.mcp.json') },
    { label: 'Claude Code (~/.claude.json)', file: path.join(home, '.claude.json') },
    { label: 'Claude Desktop', file: path.join(desktopDir, 'claude_desktop_config.json') },
    { label: 'Cursor', file: path.join(home, '.cursor', 'mcp.json') },
  ];
}

const McpServersSchema = z.record(z.string(), z.unknown());
const McpFileSchema = z.looseObject({
  mcpServers: McpServersSchema.optional(),
  // ~/.claude.json keeps per-project ("local scope") servers under projects[<absolute path>].
  projects: z.record(z.string(), z.looseObject({ mcpServers: McpServersSchema.optional() })).optional(),
});

const RawServerSchema = z.looseObject({
  type: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  url: z.string().optional(),
  // Gemini CLI's streamable HTTP endpoint (its `url` is an SSE one).
  httpUrl: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  disabled: z.boolean().optional(),
});

/**
 * The `mcpServers` entries of a source file: top-level ones, plus — for ~/.claude.json — the
 * project entry for `cwd` (what Claude Code itself would load here). Undefined if the file is absent.
 */
async function readMcpServers(file: string, cwd: string): Promise<Record<string, unknown> | undefined> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new LoadoutError('CONFIG_INVALID', `${file} is not valid JSON (${errorMessage(error)})`);
  }
  const parsed = McpFileSchema.safeParse(data);
  if (!parsed.success)
    throw new LoadoutError('CONFIG_INVALID', `${file} does not look like an MCP config: ${firstIssueText(parsed.error)}`);
  return { ...parsed.data.mcpServers, ...parsed.data.projects?.[path.resolve(cwd)]?.mcpServers };
}

/** Read every source and combine their servers; the first source to name a server wins. */
export async function collectImports(sources: readonly ImportSource[], cwd: string): Promise<ImportResult> {
  const result: ImportResult = { servers: {}, found: [], skipped: [] };
  for (const source of sources) {
    const entries = await readMcpServers(source.file, cwd);
    if (!entries) continue;
    const taken: string[] = [];
    for (const [originalName, raw] of Object.entries(entries)) {
      const name = safeServerName(originalName);
      const converted = convertServer(originalName, raw);
      if (typeof converted === 'string') result.skipped.push({ source, name: originalName, reason: converted });
      else if (result.servers[name])
        result.skipped.push({ source, name: originalName, reason: `a server named '${name}' was already imported` });
      else {
        result.servers[name] = converted;
        taken.push(name);
      }
    }
    if (taken.length || Object.keys(entries).length) result.found.push({ source, servers: taken });
  }
  return result;
}

/** One client entry as a servers.yaml entry, or the reason it cannot be imported. */
export function convertServer(name: string, raw: unknown): Record<string, unknown> | string {
  const parsed = RawServerSchema.safeParse(raw);
  if (!parsed.success) return `not a server entry (${firstIssueText(parsed.error)})`;
  const { httpUrl, ...rest } = parsed.data;
  const server = httpUrl ? { ...rest, type: 'http', url: httpUrl } : rest;
  if (isLoadoutItself(name, server)) return 'it is loadout itself';
  const type = transportOfRaw(server);
  if (!type) return `unknown type '${server.type}' (expected stdio, http or sse)`;
  const entry: Record<string, unknown> = type === 'stdio' ? {} : { type };
  if (type === 'stdio') {
    if (!server.command) return 'no "command"';
    entry.command = server.command;
    if (server.args?.length) entry.args = server.args;
    if (server.env && Object.keys(server.env).length) entry.env = server.env;
    if (server.cwd) entry.cwd = server.cwd;
  } else {
    if (!server.url) return 'no "url"';
    entry.url = server.url;
    if (server.headers && Object.keys(server.headers).length) entry.headers = server.headers;
  }
  if (server.disabled) entry.enabled = false;
  const valid = ServerConfigSchema.safeParse(entry);
  return valid.success ? entry : `invalid (${firstIssueText(valid.error)})`;
}

/** The text of a new servers.yaml holding the imported servers, with a short guide on top naming `command` (e.g. "loadout init"). */
export function importedServersYaml(result: ImportResult, command: string): string {
  const document = new (yamlModule().Document)({ servers: result.servers });
  for (const name of Object.keys(result.servers)) proposeSandbox(document, name);
  const from = result.found.map((entry) => entry.source.file).join(', ') || 'nothing (no client config found)';
  document.commentBefore = [
    ` Written by "${command}" from: ${from}`,
    ' Per server: command/args/env/cwd (stdio), or type: http|sse with url/headers.',
    ' always_on: true keeps a server connected; otherwise it starts on first use and stops',
    ' after idle_timeout_minutes (default 5). enabled: false switches a server or a tool off.',
    ' "loadout refresh" fills in and updates each server\'s tools: map; your settings are kept.',
  ].join('\n');
  return document.toString({ lineWidth: 0 });
}

/** Create servers.yaml (mode 0600: it may hold secrets) with `text`; refuses (CONFIG_EXISTS) if it exists, even if created meanwhile. */
export async function createServersFile(file: string, text: string): Promise<void> {
  await withFileLock(file, async () => {
    if ((await readTextIfExists(file)) !== undefined) {
      throw new LoadoutError(
        'CONFIG_EXISTS',
        `${file} already exists; loadout never overwrites it. Edit it, or run "loadout refresh" to re-discover tools`,
      );
    }
    await writeTextAtomic(file, text, { mode: SERVERS_FILE_MODE });
  });
}

function transportOfRaw(server: z.infer<typeof RawServerSchema>): 'stdio' | 'http' | 'sse' | undefined {
  switch (server.type) {
    case undefined:
      // Cursor writes remote servers as a bare url; an /sse path is the old SSE transport.
      if (server.command) return 'stdio';
      return server.url && /\/sse\/?$/.test(new URL(server.url, 'http://x').pathname) ? 'sse' : 'http';
    case 'stdio':
    case 'http':
    case 'sse':
      return server.type;
    case 'streamable-http':
    case 'streamableHttp':
      return 'http';
    default:
      return undefined;
  }
}

/** Whether a client's server entry starts loadout itself (by name, or a command line running `loadout serve`) and is not switched off. */
export function startsLoadout(name: string, raw: unknown): boolean {
  const parsed = RawServerSchema.safeParse(raw);
  return parsed.success && !parsed.data.disabled && isLoadoutItself(name, parsed.data);
}

// Importing loadout into itself would make it its own downstream, starting itself forever.
function isLoadoutItself(name: string, server: z.infer<typeof RawServerSchema>): boolean {
  if (name === 'loadout') return true;
  const words = [server.command ?? '', ...(server.args ?? [])];
  return words.some((word) => /(^|[\\/@])loadout(@[^\\/]*)?(\.js)?$/.test(word)) && words.includes('serve');
}

/** A client server name made safe for servers.yaml (letters, digits, _ and -). */
export function safeServerName(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return safe || 'server';
}
