// What `loadout setup <client>` will do, worked out before anything is written: which of the
// client's servers go into servers.yaml, the new text of each client file (loadout added, moved
// servers removed), and whether Claude Code's own CLI adds loadout. Reads files; writes none.
import { convertServer, loadServersFile, safeServerName, type ImportResult, type LoadoutPaths } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import { planSecrets, type SecretsPlan } from '../secrets.js';
import type { ClientDefinition, ServersLocation } from './clientFiles.js';
import { readClientFile, setJsonValue, valueAt, type JsonFile } from './jsonFile.js';
import { setTomlTable } from './tomlFile.js';

/** How loadout itself is started by the client. */
export interface LaunchCommand {
  command: string;
  args: string[];
}

/** One client file before and after the setup. */
export interface FileChange {
  file: string;
  before: string | undefined;
  after: string;
}

/** A client server that is not imported, and stays in the client. */
export interface KeptServer {
  location: ServersLocation;
  name: string;
  reason: string;
}

/** Everything `setup` would change, for showing and then applying. */
export interface SetupPlan {
  /** New servers for servers.yaml, in the shape init's import uses (literal secrets already replaced unless kept). */
  imports: ImportResult;
  /** The literal secrets of the new servers, and what secrets.env gains. */
  secrets: SecretsPlan;
  /** Client servers that servers.yaml already has (same command or url). */
  alreadyInLoadout: Array<{ location: ServersLocation; name: string; /** Its name in servers.yaml. */ as: string }>;
  kept: KeptServer[];
  /** Entries taken out of the client (with --move). */
  removed: Array<{ location: ServersLocation; name: string }>;
  /** How loadout gets into the client: it is there, a file edit, or `claude mcp add`. */
  addLoadout:
    | { kind: 'present'; location: ServersLocation }
    | { kind: 'file' }
    | { kind: 'claude-cli'; command: string; args: string[]; /** The file the CLI writes (backed up first). */ file: string };
  changes: FileChange[];
  /** Every client file read, as read (what a backup must hold). */
  read: JsonFile[];
}

/** Options of a setup run. */
export interface PlanOptions {
  move: boolean;
  launch: LaunchCommand;
  /** Path of the `claude` executable when it is on the PATH (Claude Code only). */
  claudeCli?: string;
  /** Leave literal secrets in servers.yaml (--keep-secrets). */
  keepSecrets: boolean;
}

// VS Code fills these in itself (${input:…} prompts, ${workspaceFolder}, ${env:X}); loadout cannot.
const CLIENT_VARIABLE = /\$\{(input:|env:|workspaceFolder|userHome|pathSeparator)/;

/** Work out the setup of `client` against the current servers.yaml. */
export async function planSetup(client: ClientDefinition, paths: LoadoutPaths, options: PlanOptions): Promise<SetupPlan> {
  const files = new Map<string, JsonFile>();
  for (const location of [...client.locations, client.target]) {
    if (!files.has(location.file)) files.set(location.file, await readClientFile(location));
  }
  const loadout = (await loadServersFile(paths.serversFile)).config.servers;
  const plan: SetupPlan = {
    imports: { servers: {}, found: [], skipped: [] },
    secrets: { servers: {}, values: {}, moved: [], keep: options.keepSecrets, found: [] },
    alreadyInLoadout: [],
    kept: [],
    removed: [],
    addLoadout: { kind: 'file' },
    changes: [],
    read: [...files.values()],
  };
  const texts = new Map([...files].map(([file, json]) => [file, json.text]));
  const remove = (location: ServersLocation, name: string) => {
    plan.removed.push({ location, name });
    texts.set(location.file, setServerEntry(texts.get(location.file) ?? '', location, name, undefined));
  };

  for (const location of client.locations) {
    const entries = serversAt(files.get(location.file)!, location);
    if (!entries) continue;
    const taken: string[] = [];
    for (const [originalName, raw] of Object.entries(entries)) {
      const name = safeServerName(originalName);
      const converted = CLIENT_VARIABLE.test(JSON.stringify(raw))
        ? `uses ${client.title}'s own \${…} variables, which only ${client.title} fills in; add it to servers.yaml by hand`
        : convertServer(originalName, raw);
      if (typeof converted === 'string') {
        // convertServer refuses loadout itself (by name, or by a command line running `loadout serve`).
        const isLoadout = originalName === 'loadout' || /loadout itself/.test(converted);
        if (isLoadout && location.file === client.target.file && sameMap(location, client.target))
          plan.addLoadout = { kind: 'present', location };
        if (!isLoadout) plan.kept.push({ location, name: originalName, reason: converted });
        continue;
      }
      // The same server under any name, in servers.yaml or imported from another scope, is not added twice.
      const inLoadout = findSameServer(loadout, converted);
      const twin = inLoadout ?? findSameServer(plan.imports.servers, converted);
      if (!twin && (loadout[name] || plan.imports.servers[name])) {
        plan.kept.push({
          location,
          name: originalName,
          reason: `a different server named '${name}' is ${loadout[name] ? 'in servers.yaml' : 'imported from another scope'}`,
        });
        continue;
      }
      if (inLoadout) plan.alreadyInLoadout.push({ location, name: originalName, as: inLoadout });
      else if (!twin) {
        plan.imports.servers[name] = converted;
        taken.push(name);
      }
      if (options.move) remove(location, originalName);
    }
    plan.imports.found.push({ source: { label: location.label, file: location.file }, servers: taken });
  }

  if (plan.addLoadout.kind !== 'present') {
    const entry = {
      ...(client.stdioType ? { type: 'stdio' } : {}),
      ...options.launch,
      ...(client.alwaysLoad ? { alwaysLoad: true } : {}),
    };
    // add-json, not add: `claude mcp add` has no flag for alwaysLoad.
    if (options.claudeCli)
      plan.addLoadout = {
        kind: 'claude-cli',
        command: options.claudeCli,
        file: client.target.file,
        args: ['mcp', 'add-json', '--scope', 'user', 'loadout', JSON.stringify(entry)],
      };
    else texts.set(client.target.file, setServerEntry(texts.get(client.target.file) ?? '', client.target, 'loadout', entry));
  }
  plan.secrets = await planSecrets(paths, plan.imports.servers, options.keepSecrets);
  plan.imports.servers = plan.secrets.servers;
  for (const [file, after] of texts) {
    const before = files.get(file)!.text;
    if (after !== undefined && after !== before)
      plan.changes.push({ file, before, after: before === undefined && !after.endsWith('\n') ? `${after}\n` : after });
  }
  return plan;
}

// `text` with the server `name` of `location` set to `entry`, or removed (undefined), in the file's own format.
function setServerEntry(text: string, location: ServersLocation, name: string, entry: Record<string, unknown> | undefined): string {
  const at = [...location.jsonPath, name];
  return location.toml ? setTomlTable(location.file, text, at, entry) : setJsonValue(text, at, entry);
}

function serversAt(file: JsonFile, location: ServersLocation): Record<string, unknown> | undefined {
  const value = valueAt(file.data, location.jsonPath);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new LoadoutError(
      'CONFIG_INVALID',
      `${location.file}: "${location.jsonPath.join('.')}" is not an object of servers; loadout does not change this file`,
    );
  return value as Record<string, unknown>;
}

function sameMap(a: ServersLocation, b: ServersLocation): boolean {
  return a.jsonPath.join('\u0000') === b.jsonPath.join('\u0000');
}

/** The name of the server in `servers` that runs the same command line or talks to the same url. */
export function findSameServer(servers: Record<string, Record<string, unknown>>, server: Record<string, unknown>): string | undefined {
  const key = (entry: Record<string, unknown>) => JSON.stringify([entry.command ?? null, entry.args ?? [], entry.url ?? null]);
  return Object.keys(servers).find((name) => key(servers[name]!) === key(server));
}
