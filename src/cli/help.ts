// How loadout's help reads: commands in the order a user meets them, each with an example, choices
// and defaults written one way, wrapped at the terminal width (COLUMNS when piped), and a command
// given nothing to do answers with its help. Applied to whichever commands a run loads (main.ts).
import { Help, type Argument, type Command, type Option } from 'commander';

/**
 * Commands in the order of use, each with examples; the first shows in its parent's command list,
 * all of them in the command's own help. A subcommand is keyed "toolset create".
 */
const GUIDE: ReadonlyArray<readonly [command: string, examples: readonly string[]]> = [
  ['setup', ['loadout setup claude-code --move', 'loadout setup cursor --dry-run', 'loadout setup claude-code --undo']],
  ['doctor', ['loadout doctor', 'loadout doctor --json']],
  ['serve', ['loadout serve', 'loadout serve --http --port 7077 --token "$TOKEN"']],
  ['search', ['loadout search read a file', 'loadout search --explain create an issue', 'loadout search -- --force push']],
  ['status', ['loadout status', 'loadout status --json']],
  ['list', ['loadout list --server github', 'loadout list --disabled']],
  ['refresh', ['loadout refresh', 'loadout refresh github --accept-changed']],
  ['toolset', ['loadout toolset create web fetch.fetch', 'loadout toolset equip web']],
  ['toolset create', ['loadout toolset create web fetch.fetch memory.read_graph']],
  ['toolset equip', ['loadout toolset equip web', 'loadout toolset equip all']],
  ['toolset unequip', ['loadout toolset unequip']],
  ['toolset list', ['loadout toolset list']],
  ['toolset show', ['loadout toolset show web']],
  ['toolset delete', ['loadout toolset delete web']],
  ['auth', ['loadout auth linear', 'loadout auth linear --logout']],
  ['audit', ['loadout audit --since 1h', 'loadout audit --principal alice@example.com --server github --json']],
  ['enrich', ['loadout enrich --server github', 'loadout enrich --backend command']],
  ['init', ['loadout init', 'loadout init --from .mcp.json --no-discover']],
  ['optimize', ['loadout optimize report', 'loadout optimize run github search_issues']],
  ['store', ['loadout store status --store postgres://loadout@db:5432/loadout', 'loadout store import ~/.local/share/loadout']],
  ['store migrate', ['LOADOUT_STORE_URL=postgres://loadout@db:5432/loadout loadout store migrate']],
  ['store status', ['loadout store status --json']],
  ['store import', ['LOADOUT_SECRET_KEY=… loadout store import ~/.local/share/loadout']],
  ['store export', ['loadout store export ./exported']],
];
const ORDER = new Map(GUIDE.map(([name], index) => [name, index]));
const EXAMPLES = new Map(GUIDE);

/** Apply loadout's help to `root` and every command under it (call once all are registered). */
export function configureHelp(root: Command): void {
  for (const command of commandTree(root)) {
    const examples = EXAMPLES.get(commandPath(command));
    command.configureHelp(HELP).configureOutput({
      getOutHelpWidth: () => terminalWidth(process.stdout),
      getErrHelpWidth: () => terminalWidth(process.stderr),
    });
    if (examples) command.addHelpText('after', `\nExamples:\n${examples.map((example) => `  ${example}`).join('\n')}`);
    if (command.commands.length) {
      command.addHelpText('after', `\nRun "${`loadout ${commandPath(command)}`.trim()} COMMAND --help" for its options and examples.`);
      // Commander answers a command that needs a subcommand and got none (plain `loadout`, `loadout
      // toolset`) with its help on stderr and exit 1. Asking for nothing is asking for help: stdout, 0.
      const help = command.help.bind(command);
      command.help = () => help();
    }
  }
}

// Below this, a description column is too narrow to read: it goes under its term instead.
const MIN_DESCRIPTION_WIDTH = 40;
const STACKED_INDENT = '      ';

// The overrides of commander's Help; its other methods (layout, wrapping) stay as they are.
const HELP: Partial<Help> = {
  // Commander leaves text unwrapped below 40 columns; loadout wraps down to 20.
  minWidthToWrap: 20,
  formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
    const width = this.helpWidth ?? 80;
    if (!description || width - termWidth - 4 >= MIN_DESCRIPTION_WIDTH)
      return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
    return `  ${term}\n${helper.boxWrap(description, width - STACKED_INDENT.length).replace(/^/gm, STACKED_INDENT)}`;
  },
  visibleCommands(this: Help, command: Command): Command[] {
    const rank = (sub: Command): number => ORDER.get(commandPath(sub)) ?? (sub.name() === 'help' ? Infinity : ORDER.size);
    return Help.prototype.visibleCommands.call(this, command).sort((a, b) => rank(a) - rank(b));
  },
  subcommandDescription(command: Command): string {
    const example = EXAMPLES.get(commandPath(command))?.[0];
    const summary = command.summary() || command.description();
    return example ? `${summary}\ne.g. ${example}` : summary;
  },
  optionDescription(option: Option): string {
    // A flag's default (`--no-browser`: true) is the flag not given, not worth a word.
    const takesValue = option.required || option.optional;
    return withDetails(option.description, option.argChoices, takesValue ? shownDefault(option) : undefined);
  },
  argumentDescription(argument: Argument): string {
    return withDetails(argument.description, argument.argChoices, shownDefault(argument));
  },
};

// "description (choices: a, b; default: x)": choices and default unquoted, in one shape everywhere.
function withDetails(description: string, choices: readonly string[] | undefined, defaultText: string | undefined): string {
  const details = [
    ...(choices ? [`choices: ${choices.join(', ')}`] : []),
    ...(defaultText !== undefined ? [`default: ${defaultText}`] : []),
  ];
  return details.length ? `${description} (${details.join('; ')})`.trim() : description;
}

function shownDefault(item: Option | Argument): string | undefined {
  if (item.defaultValueDescription) return item.defaultValueDescription;
  const value: unknown = item.defaultValue;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return undefined;
  // Option defaults here are strings, numbers and lists of strings (`--allow-origin`).
  return Array.isArray(value) ? value.join(', ') : JSON.stringify(value).replace(/^"(.*)"$/, '$1');
}

function terminalWidth(stream: NodeJS.WriteStream): number {
  if (stream.isTTY && stream.columns) return stream.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : 80;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

function commandTree(command: Command): Command[] {
  return [command, ...command.commands.flatMap(commandTree)];
}
