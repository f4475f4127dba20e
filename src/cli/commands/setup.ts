// `loadout setup <client> [--move] [--yes|--dry-run] [--undo] [--json]`: import a client's MCP servers
// into servers.yaml and add loadout to that client (with --move, take the imported servers out of
// it), showing the diff and asking first; --undo restores the backup the last run took. A single
// user's command: it refuses store mode (a team's clients connect to a replica over HTTP).
import os from 'node:os';
import { Argument, type Command } from 'commander';
import { LoadoutError } from '../../shared/index.js';
import { CLIENT_NAMES, clientDefinition, currentClientEnvironment, type ClientName } from '../clients/clientFiles.js';
import { findOnPath, launchCommand } from '../clients/launch.js';
import { applySetup, applyUndo, planUndo, type SetupOutcome } from '../clients/setupApply.js';
import { planSetup, type SetupPlan } from '../clients/setupPlan.js';
import { unifiedDiff } from '../clients/textDiff.js';
import {
  ServerConfigSchema,
  expansionEnv,
  maskLiteralSecrets,
  serverProblemText,
  unsetVariablesProblem,
  type LoadoutPaths,
  type ServerProblem,
} from '../../config/index.js';
import { discoverServers, discoveryJson, printDiscoveryStep } from '../discovery.js';
import { printJson, printLines } from '../output.js';
import { askYesNo } from '../prompt.js';
import { describeSecrets } from '../secrets.js';
import { commandEnvironment, refuseStoreMode } from '../program.js';

interface SetupOptions {
  move?: boolean;
  yes?: boolean;
  dryRun?: boolean;
  undo?: boolean;
  discover: boolean;
  keepSecrets?: boolean;
  json?: boolean;
}

/** Register `setup` on the program. */
export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description("import a client's MCP servers into servers.yaml and add loadout to that client")
    .addArgument(new Argument('<client>', 'the MCP client').choices(CLIENT_NAMES))
    .option('--move', "also remove the imported servers from the client's config, so the agent reaches them only through loadout")
    .option('-y, --yes', 'apply without asking')
    .option('--dry-run', 'print what would change, change nothing')
    .option('--undo', 'restore the client files from the backup the last setup took')
    .option('--no-discover', 'do not start the servers to list their tools now ("loadout refresh" does it later)')
    .option('--keep-secrets', 'leave literal tokens and keys in servers.yaml (default: move them to secrets.env, mode 0600)')
    .option('--json', 'machine-readable output (with --yes or --dry-run)')
    .action(async (name: ClientName, options: SetupOptions, command: Command) => {
      // The JSON replaces the diff a human reads before answering, so nobody could answer.
      if (options.json && !options.yes && !options.dryRun)
        throw new LoadoutError('INVALID_ARGUMENT', '--json needs --yes or --dry-run: a script cannot answer "apply these changes?"');
      refuseStoreMode(
        command,
        "it adds a single user's loadout to a client's own config; connect a team's clients to a `loadout serve --http --store` replica instead (docs/deploy.md), and import servers into servers.yaml with `loadout init --from FILE`",
      );
      const say = options.json ? () => undefined : printLines;
      const { paths, logger, options: globals } = commandEnvironment(command, { checkOnly: options.dryRun });
      const client = clientDefinition(name, currentClientEnvironment(os.homedir()));
      if (options.undo) {
        const undo = await planUndo(paths, client);
        let applied = false;
        if (!undo.changes.length) {
          say(`The ${client.title} files already match the backup in ${undo.backup.dir}.`);
        } else {
          say(`Restoring ${client.title}'s files from ${undo.backup.dir}:`, ...undo.changes.map((change) => shownDiff(change)));
          for (const change of undo.changes.filter((entry) => entry.changedSinceSetup)) {
            say(
              `Note: ${change.file} was changed after setup wrote it; restoring the backup also undoes those later changes (in the diff above).`,
            );
          }
        }
        if (undo.changes.length ? await confirmed(options, say) : !options.dryRun) {
          await applyUndo(paths, undo);
          applied = true;
          say(`Restored. servers.yaml keeps the servers setup imported (${paths.serversFile}).`);
        }
        if (options.json)
          printJson({
            client: name,
            undo: true,
            backup: undo.backup.dir,
            changes: undo.changes.map((change) => ({ file: change.file, changedSinceSetup: change.changedSinceSetup })),
            applied,
          });
        return;
      }
      const claudeCli = name === 'claude-code' ? await findOnPath('claude') : undefined;
      const launch = await launchCommand(process.argv[1]!, { config: globals.config, data: globals.data });
      const plan = await planSetup(client, paths, {
        move: Boolean(options.move),
        launch,
        claudeCli,
        keepSecrets: Boolean(options.keepSecrets),
      });
      say(...describePlan(client.title, plan, paths));
      const problems = importProblems(plan, paths);
      if (problems.size) say(...problemLines(problems, { done: false }));
      let outcome: SetupOutcome | undefined;
      const nothingToChange = !plan.changes.length && plan.addLoadout.kind !== 'claude-cli' && !Object.keys(plan.imports.servers).length;
      if (nothingToChange) say('Nothing to change.');
      else if (await confirmed(options, say)) {
        outcome = await applySetup(client, plan, paths);
        if (outcome.backup) say(`Backup of the previous files: ${outcome.backup.dir} ("loadout setup ${name} --undo" restores it).`);
      }
      // The agent's first search must find the tools: list every server the catalog lacks now.
      const discovery =
        options.discover && !options.dryRun
          ? await discoverServers(paths, logger, undefined, { undiscoveredOnly: true, progressLines: !options.json })
          : [];
      if (options.json) {
        const unset = [...problems].map(([server, problem]) => ({ server, ...problem }));
        printJson({ ...planJson(name, plan, paths.serversFile, outcome), problems: unset, discovery: discoveryJson(discovery) });
        return;
      }
      printDiscoveryStep(discovery);
      // Applied all the same (exit 0): what is left is the user's to set, named again last so it is not missed.
      if (outcome && problems.size) say(...problemLines(problems, { done: true }));
      if (outcome)
        say(
          `${problems.size ? '' : 'Done. '}Restart ${client.title} (or reload its MCP servers) to connect to loadout; "loadout doctor" checks every server.`,
        );
      if (client.needs) say(client.needs);
    });
}

async function confirmed(options: SetupOptions, say: (...lines: string[]) => void): Promise<boolean> {
  if (options.dryRun) {
    say('Dry run: nothing was changed.');
    return false;
  }
  if (options.yes) return true;
  if (await askYesNo('Apply these changes?')) return true;
  throw new LoadoutError('NOT_CONFIRMED', 'nothing was changed (answer y, or pass --yes to apply without asking)');
}

// The imported servers that use a ${VAR} neither the environment nor secrets.env (with what this
// setup moves there) sets: they are imported, but cannot start until the user sets it.
function importProblems(plan: SetupPlan, paths: LoadoutPaths): Map<string, ServerProblem> {
  const env = expansionEnv(paths.secretsFile, { ...process.env, ...plan.secrets.values });
  const problems = new Map<string, ServerProblem>();
  for (const [server, raw] of Object.entries(plan.imports.servers)) {
    const parsed = ServerConfigSchema.safeParse(raw);
    const problem = parsed.success && parsed.data.enabled ? unsetVariablesProblem(parsed.data, env, paths.secretsFile) : undefined;
    if (problem) problems.set(server, problem);
  }
  return problems;
}

// `github will not start until you set what it uses:`, then each server's problem and fix.
function problemLines(problems: ReadonlyMap<string, ServerProblem>, { done }: { done: boolean }): string[] {
  const one = problems.size === 1;
  const servers = one ? [...problems.keys()][0]! : `${problems.size} servers`;
  return [
    `${done ? 'Done, but ' : ''}${servers} will not start until you set what ${one ? 'it uses' : 'they use'}:`,
    ...[...problems].map(([server, problem]) => `  ${serverProblemText(server, problem)}`),
  ];
}

// `setup --json`: the plan as describePlan tells it, and what was applied.
function planJson(client: ClientName, plan: SetupPlan, serversFile: string, outcome: SetupOutcome | undefined): Record<string, unknown> {
  const { addLoadout } = plan;
  return {
    client,
    serversFile,
    imported: Object.keys(plan.imports.servers),
    found: plan.imports.found.map(({ source, servers }) => ({ ...source, servers })),
    alreadyInLoadout: plan.alreadyInLoadout.map(({ location, name, as }) => ({ file: location.file, name, as })),
    kept: plan.kept.map(({ location, name, reason }) => ({ file: location.file, name, reason })),
    removed: plan.removed.map(({ location, name }) => ({ file: location.file, name })),
    addLoadout: addLoadout.kind === 'claude-cli' ? { kind: addLoadout.kind, args: addLoadout.args } : { kind: addLoadout.kind },
    changes: plan.changes.map((change) => ({ file: change.file, diff: shownDiff(change, plan) })),
    applied: outcome !== undefined,
    backup: outcome?.backup?.dir ?? null,
  };
}

function describePlan(title: string, plan: SetupPlan, { serversFile, secretsFile }: LoadoutPaths): string[] {
  const lines: string[] = [];
  for (const { source, servers } of plan.imports.found) if (servers.length) lines.push(`${source.label}: importing ${servers.join(', ')}`);
  const imported = Object.keys(plan.imports.servers);
  lines.push(
    imported.length
      ? `servers.yaml (${serversFile}) gains ${imported.length} server${imported.length === 1 ? '' : 's'}: ${imported.join(', ')}`
      : `No new servers for servers.yaml (${serversFile}).`,
    ...describeSecrets(plan.secrets, secretsFile, 'Moving'),
  );
  for (const { location, name, as } of plan.alreadyInLoadout)
    lines.push(`${location.label}: '${name}' is already in servers.yaml${as === name ? '' : ` as '${as}'`}`);
  for (const { location, name, reason } of plan.kept) lines.push(`${location.label}: keeping '${name}' in ${title}: ${reason}`);
  if (plan.removed.length)
    lines.push(`Removing from ${title} (it reaches them through loadout): ${plan.removed.map(({ name }) => name).join(', ')}`);
  else if (imported.length || plan.alreadyInLoadout.length)
    lines.push(`${title} keeps its servers too (--move takes them out, so the agent does not see every tool twice).`);
  if (plan.addLoadout.kind === 'present') lines.push(`${title} already starts loadout (${plan.addLoadout.location.label}).`);
  if (plan.addLoadout.kind === 'claude-cli')
    lines.push(`Adding loadout with Claude Code's CLI: claude ${plan.addLoadout.args.map(quote).join(' ')}`);
  for (const change of plan.changes) lines.push(shownDiff(change, plan));
  return lines;
}

// A client file's diff as shown on a terminal or in --json: its literal secrets hidden, those the
// plan found (moved or kept) and anything else that looks like one.
function shownDiff(change: { file: string; before?: string; after?: string }, plan?: SetupPlan): string {
  const known = plan ? plan.secrets.found : [];
  return maskLiteralSecrets(unifiedDiff(change.file, change.before, change.after), known);
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
