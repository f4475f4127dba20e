// secrets.env in the config dir: the literal secrets `setup` and `init` moved out of servers.yaml,
// one NAME=value a line, mode 0600. Its values serve `${VAR}` expansion only: a server gets the
// variables its own entry references, never the whole file in its environment.
import { readFileSync, statSync } from 'node:fs';
import { LoadoutError } from '../shared/index.js';
import { readTextIfExists, updateTextFile } from './safeWrite.js';

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** NAME → value of a secrets.env text; blank lines and `#` lines are skipped, a `"…"` value is a JSON string. */
export function parseSecretsEnv(text: string, file: string): Record<string, string> {
  const values: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, index) => {
    if (!line.trim() || line.trimStart().startsWith('#')) return;
    const equals = line.indexOf('=');
    const name = equals > 0 ? line.slice(0, equals).trim() : '';
    if (!VARIABLE.test(name)) throw new LoadoutError('CONFIG_INVALID', `${file}:${index + 1}: expected NAME=value`);
    const raw = line.slice(equals + 1);
    values[name] = raw.startsWith('"') ? parseQuoted(raw, `${file}:${index + 1}`) : raw;
  });
  return values;
}

function parseQuoted(raw: string, where: string): string {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'string') return value;
  } catch {
    // Reported below, naming the line.
  }
  throw new LoadoutError('CONFIG_INVALID', `${where}: a value in double quotes must be one JSON string`);
}

// A value that would not survive `NAME=value` to the end of the line is written as a JSON string.
function lineOf(name: string, value: string): string {
  return `${name}=${/^\s|\s$|^"|[\r\n]/.test(value) ? JSON.stringify(value) : value}`;
}

/** The values in secrets.env (empty when there is no such file). */
export async function readSecretsFile(file: string): Promise<Record<string, string>> {
  const text = await readTextIfExists(file);
  return text === undefined ? {} : parseSecretsEnv(text, file);
}

/** Add `values` to secrets.env under its lock, creating it with a short guide; always mode 0600. */
export async function addSecrets(file: string, values: Record<string, string>): Promise<void> {
  if (!Object.keys(values).length) return;
  await updateTextFile(
    file,
    (current) => {
      const existing = current === undefined ? {} : parseSecretsEnv(current, file);
      const added = Object.entries(values).filter(([name, value]) => existing[name] !== value);
      if (!added.length) return undefined;
      const clash = added.find(([name]) => existing[name] !== undefined);
      if (clash) throw new LoadoutError('CONFIG_CHANGED', `${file} already holds another value for ${clash[0]}; nothing was written`);
      const base =
        current ??
        [
          '# Secrets loadout moved out of servers.yaml, which refers to them as ${NAME}.',
          "# Read when a server starts; a variable set in loadout's environment takes precedence.",
          '',
        ].join('\n');
      return `${base}${base.endsWith('\n') ? '' : '\n'}${added.map(([name, value]) => lineOf(name, value)).join('\n')}\n`;
    },
    { mode: 0o600 },
  );
}

/**
 * The environment `${VAR}`s expand from: `env`, then secrets.env for names `env` leaves unset.
 * The file is read again whenever it changes, so a server started later sees an edit. Its names
 * are not enumerable: spreading this environment into a child's copies `env` alone.
 */
export function expansionEnv(secretsFile: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  let cached: { stamp: string; values: Record<string, string> } | undefined;
  const secrets = (): Record<string, string> => {
    let stamp: string;
    try {
      const { mtimeMs, size } = statSync(secretsFile);
      stamp = `${mtimeMs}:${size}`;
    } catch {
      return {};
    }
    if (cached?.stamp !== stamp) cached = { stamp, values: parseSecretsEnv(readFileSync(secretsFile, 'utf8'), secretsFile) };
    return cached.values;
  };
  // Over `env` itself, not a copy: a variable set later (process.env) is seen, as before.
  return new Proxy(env, {
    get: (target, name) => {
      const value: unknown = Reflect.get(target, name);
      // An empty variable counts as unset, as in expandEnv.
      return typeof name === 'string' && !value ? (secrets()[name] ?? value) : value;
    },
    has: (target, name) => Reflect.has(target, name) || (typeof name === 'string' && Object.hasOwn(secrets(), name)),
  });
}
