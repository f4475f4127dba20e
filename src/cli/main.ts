#!/usr/bin/env node
// The loadout command line. The CLI is the only place that prints for humans or exits the process.
import { Command, InvalidArgumentError, Option } from 'commander';
import { LOADOUT_VERSION, LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../shared/index.js';
import { configureHelp } from './help.js';
import { exitQuietlyOnEpipe, failureMessage, printError, useStderrFormat } from './output.js';
import { holdYoungGeneration } from './youngGeneration.js';

/** How each command is registered, loaded on demand; in the order the full help lists them before help.ts sorts them. */
const COMMANDS: Record<string, () => Promise<(program: Command) => void>> = {
  serve: async () => (await import('./commands/serve.js')).registerServe,
  init: async () => (await import('./commands/init.js')).registerInit,
  refresh: async () => (await import('./commands/refresh.js')).registerRefresh,
  status: async () => (await import('./commands/status.js')).registerStatus,
  list: async () => (await import('./commands/list.js')).registerList,
  toolset: async () => (await import('./commands/toolset.js')).registerToolset,
  optimize: async () => (await import('./commands/optimize.js')).registerOptimize,
  setup: async () => (await import('./commands/setup.js')).registerSetup,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
  search: async () => (await import('./commands/search.js')).registerSearch,
  enrich: async () => (await import('./commands/enrich.js')).registerEnrich,
  auth: async () => (await import('./commands/auth.js')).registerAuth,
  audit: async () => (await import('./commands/audit.js')).registerAudit,
  store: async () => (await import('./commands/store.js')).registerStore,
};

const program = new Command('loadout')
  .description('A meta-tool MCP gateway: one MCP server in front of many, with toolsets the agent equips.')
  .version(LOADOUT_VERSION)
  .addOption(new Option('--config <dir>', 'config dir').default(undefined, '$LOADOUT_CONFIG_DIR or ~/.config/loadout'))
  .addOption(new Option('--data <dir>', 'data dir').default(undefined, '$LOADOUT_DATA_DIR or ~/.local/share/loadout'))
  .addOption(
    new Option('--store <url>', 'keep state in this team store (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the data dir')
      .default(undefined, '$LOADOUT_STORE_URL')
      .argParser(storeUrlArgument),
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

// Each command's code is loaded only when the command line names it: `serve` (what every agent
// session starts and waits for) never loads the optimization reports, client setup or doctor, and
// `search` never loads the gateway, the MCP server's HTTP side or client setup. A command line that names
// none (help, --version, a typo) or asks for help loads them all, so usage and "did you mean" still
// list them all and every help reads the same.
const named = invokedCommand(program, process.argv);
// Before the command's code loads and reads any state (youngGeneration.ts says why not for serve --http).
if (named !== 'serve' || !process.argv.includes('--http')) holdYoungGeneration();
const helpAsked = process.argv.some((arg) => arg === '--help' || arg === '-h');
const loading = named !== undefined && Object.hasOwn(COMMANDS, named) && !helpAsked ? [COMMANDS[named]!] : Object.values(COMMANDS);
for (const register of await Promise.all(loading.map((load) => load()))) register(program);
configureHelp(program);

// A usage error is printed before any action runs; it follows --log-format too.
if (process.argv.some((arg, index) => arg === '--log-format=json' || (arg === '--log-format' && process.argv[index + 1] === 'json')))
  useStderrFormat('json');

program.parseAsync(process.argv).catch((error: unknown) => {
  printError(failureMessage(error));
  process.exit(1);
});

// `--store ""` (a variable that is not set, expanded by the shell) names no store: refused, not
// read as files mode, which would serve a replica's own data dir as if it were the team's.
function storeUrlArgument(value: string): string {
  if (value.trim() === '')
    throw new InvalidArgumentError(
      'it is empty (an unset variable?): name the store, postgres://USER:PASSWORD@HOST:PORT/DATABASE, or leave --store out for the data dir',
    );
  return value;
}

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
