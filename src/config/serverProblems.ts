// Why a configured server cannot be discovered until the user changes something: its entry in
// servers.yaml is invalid (left out), or it uses a ${VAR} that is not set. One implementation that
// doctor, list, search, setup, the agent's instructions and discover-all-tools all tell them from;
// "run loadout refresh" fixes neither, so none of them may say it for these servers.
import { serverEnvTexts, unsetEnvReferences } from './envExpand.js';
import type { ServerConfig } from './schema.js';

/** What keeps a server from being discovered, told by its code, with the problem and its fix in words. */
export interface ServerProblem {
  /** CONFIG_INVALID: the entry is left out of servers.yaml as invalid; ENV_NOT_SET: a ${VAR} it uses is not set. */
  code: 'CONFIG_INVALID' | 'ENV_NOT_SET';
  /** The problem, naming the entry's file:line:col or the variables. */
  problem: string;
  /** What the user does about it. */
  fix: string;
}

/** The variables a server's config uses that are unset (or empty) in `env` and have no default. */
export function unsetVariablesOf(config: ServerConfig, env: NodeJS.ProcessEnv): string[] {
  return [...new Set(serverEnvTexts(config).flatMap((text) => unsetEnvReferences(text, env)))];
}

/** The problem of a server that uses unset variables, or undefined; `secretsFile` is where loadout also reads them. */
export function unsetVariablesProblem(config: ServerConfig, env: NodeJS.ProcessEnv, secretsFile?: string): ServerProblem | undefined {
  const unset = unsetVariablesOf(config, env);
  if (!unset.length) return undefined;
  const where = `${secretsFile ? `${secretsFile} (NAME=value lines) or ` : ''}the environment loadout starts in (your shell, or the client's "env" for loadout)`;
  return {
    code: 'ENV_NOT_SET',
    problem: `uses ${unset.map((variable) => `\${${variable}}`).join(', ')}, not set`,
    fix: `set ${unset.join(', ')} in ${where}, or write \${${unset[0]}:-default}`,
  };
}

/** The problem of an entry left out of servers.yaml as invalid; `problem` is its file:line:col and what is wrong. */
export function invalidEntryProblem(problem: string): ServerProblem {
  return { code: 'CONFIG_INVALID', problem: `left out, its entry is invalid: ${problem}`, fix: 'correct that entry in servers.yaml' };
}

/**
 * Every server that cannot be discovered as configured: each invalid entry, then each enabled
 * server using an unset variable, in servers.yaml's order.
 */
export function serverProblems(
  configs: Readonly<Record<string, ServerConfig>>,
  brokenServers: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
  secretsFile?: string,
): Map<string, ServerProblem> {
  const problems = new Map<string, ServerProblem>();
  for (const [server, problem] of brokenServers) problems.set(server, invalidEntryProblem(problem));
  for (const [server, config] of Object.entries(configs)) {
    const unset = config.enabled ? unsetVariablesProblem(config, env, secretsFile) : undefined;
    if (unset) problems.set(server, unset);
  }
  return problems;
}

/** `github: uses ${GITHUB_TOKEN}, not set; fix: set GITHUB_TOKEN in …`: one server's problem in one line. */
export function serverProblemText(server: string, { problem, fix }: ServerProblem): string {
  return `${server}: ${problem}; fix: ${fix}`;
}
