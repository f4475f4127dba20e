#!/usr/bin/env node
// The loadout command line. The CLI is the only place that prints for humans or exits the process.
import { Command, Option } from 'commander';
import { LOADOUT_VERSION, LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../shared/index.js';
import { registerServe } from './commands/serve.js';
import { exitQuietlyOnEpipe, failureMessage, printError, useStderrFormat } from './output.js';

const program = new Command('loadout')
  .description('A meta-tool MCP gateway: one MCP server in front of many, with toolsets the agent equips.')
  .version(LOADOUT_VERSION)
  .addOption(new Option('--config <dir>', 'config dir').default(undefined, '$LOADOUT_CONFIG_DIR or ~/.config/loadout'))
  .addOption(new Option('--data <dir>', 'data dir').default(undefined, '$LOADOUT_DATA_DIR or ~/.local/share/loadout'))
  .addOption(
    new Option(
      '--store <url>',
      'keep state in this team store (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the data dir',
    ).default(undefined, '$LOADOUT_STORE_URL'),
  )
  .addOption(new Option('--log-level <level>', 'stderr log level').choices(LOG_LEVELS).default('warn'))
  .addOption(
    new Option('--log-format <format>', 'stderr format: a readable line per event, or JSON lines').choices(LOG_FORMATS).default('human'),
  )
  // Usage errors are one line like every other failure: "loadout: <problem> (see --help)".
  .configureOutput({ outputError: (text) => printError(`${text.replace(/^error: /, '').trim()} (see --help)`) });

// `loadout status | head`: once the reader has gone, stop quietly, as Unix tools do. Not for
// `serve`, whose stdout is the protocol: its transport reports the error and shuts down cleanly.
program.hook('preAction', (_program, command) => {
  if (command.name() !== 'serve') exitQuietlyOnEpipe();
  // Notes and the final error follow the log format: one format on stderr per run.
  useStderrFormat(command.optsWithGlobals<{ logFormat: LogFormat }>().logFormat);
});

registerServe(program);
// `serve` is what every agent session starts and waits for. The other commands' code (optimization
// reports, client setup, doctor, prompts: ~100 KB) is loaded only when the command line names one of
// them, or names none (help, a typo), or asks for help, so usage and "did you mean" still list them
// all and every help reads the same.
if (invokedCommand(program, process.argv) !== 'serve' || process.argv.some((arg) => arg === '--help' || arg === '-h')) {
  const { registerOtherCommands } = await import('./otherCommands.js');
  registerOtherCommands(program);
}

// A usage error is printed before any action runs; it follows --log-format too.
if (process.argv.some((arg, index) => arg === '--log-format=json' || (arg === '--log-format' && process.argv[index + 1] === 'json')))
  useStderrFormat('json');

program.parseAsync(process.argv).catch((error: unknown) => {
  printError(failureMessage(error));
  process.exit(1);
});

// The command `argv` names: its first word that is neither one of the program's own options nor
// such an option's value (`--config DIR serve`); as commander reads it, from the same option list.
function invokedCommand(root: Command, argv: string[]): string | undefined {
  const args = argv.slice(2);
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') return args[index + 1];
    if (!arg.startsWith('-')) return arg;
    const option = root.options.find((candidate) => candidate.long === arg || candidate.short === arg);
    if (option?.required || option?.optional) index++;
  }
  return undefined;
}
