// `${VAR}` and `${VAR:-default}` expansion for server command, args, env, cwd, url, headers and
// OAuth client_secret. Expansion happens only when a server starts; the config keeps the references, so secrets are never
// written back or logged.
import { LoadoutError } from '../shared/index.js';
import { oauthSettingsOf, type ServerConfig } from './schema.js';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Expand references in `text`; a missing variable without a default throws, naming it. */
export function expandEnv(text: string, env: NodeJS.ProcessEnv, where: string): string {
  return text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new LoadoutError(
      'SERVER_START_FAILED',
      `${where} uses \${${name}}, but ${name} is not set; set it in the environment or write \${${name}:-default}`,
    );
  });
}

/**
 * Every text of `config` whose `${VAR}`s are expanded when it starts: what a doctor checks for
 * unset variables and what a start masks in the output it shows. A client_secret counts only
 * where OAuth is used (oauthSettingsOf), since only there is it expanded.
 */
export function serverEnvTexts(config: ServerConfig): string[] {
  if (config.type === 'stdio') return [config.command, ...config.args, ...Object.values(config.env), config.cwd ?? ''];
  const secret = oauthSettingsOf(config)?.client_secret;
  return [config.url, ...Object.values(config.headers), ...(secret === undefined ? [] : [secret])];
}

/** Names of the variables `text` references that are unset (or empty) and have no default. */
export function unsetEnvReferences(text: string, env: NodeJS.ProcessEnv): string[] {
  return [...text.matchAll(REFERENCE)].filter(([, name, fallback]) => fallback === undefined && !env[name!]).map(([, name]) => name!);
}

/** The variables `text` references that are set, with the values expansion puts in (to mask them in output). */
export function referencedValues(text: string, env: NodeJS.ProcessEnv): Array<{ name: string; value: string }> {
  return [...text.matchAll(REFERENCE)].flatMap(([, name]) => (env[name!] ? [{ name: name!, value: env[name!]! }] : []));
}

/** Expand every value of a string record. */
export function expandEnvRecord(record: Record<string, string>, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expandEnv(value, env, `${where} ${key}`)]));
}
