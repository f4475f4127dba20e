// Every command but `serve`, registered together with the help: main.ts imports this module only
// when the command line names one of them (or none, or asks for help), so a gateway start never
// loads their code.
import type { Command } from 'commander';
import { registerAudit } from './commands/audit.js';
import { registerAuth } from './commands/auth.js';
import { registerDoctor } from './commands/doctor.js';
import { registerEnrich } from './commands/enrich.js';
import { registerInit } from './commands/init.js';
import { registerList } from './commands/list.js';
import { registerOptimize } from './commands/optimize.js';
import { registerRefresh } from './commands/refresh.js';
import { registerSearch } from './commands/search.js';
import { registerSetup } from './commands/setup.js';
import { registerStatus } from './commands/status.js';
import { registerStore } from './commands/store.js';
import { registerToolset } from './commands/toolset.js';
import { configureHelp } from './help.js';

/** Register the commands other than `serve`, then the help of every command (help.ts orders them). */
export function registerOtherCommands(program: Command): void {
  registerInit(program);
  registerRefresh(program);
  registerStatus(program);
  registerList(program);
  registerToolset(program);
  registerOptimize(program);
  registerSetup(program);
  registerDoctor(program);
  registerSearch(program);
  registerEnrich(program);
  registerAuth(program);
  registerAudit(program);
  registerStore(program);
  configureHelp(program);
}
