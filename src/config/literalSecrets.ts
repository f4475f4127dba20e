// Literal secrets in imported server entries: an env var or header whose name says it holds a
// credential (TOKEN, KEY, SECRET, PASSWORD, AUTH, …), or any value of the form "Bearer …". Each
// is replaced by a `${VAR}` reference and its value returned for secrets.env. Pure: reads no file.

// Words of a name that mark a credential; a name is split at `_`, `-`, `.` and camelCase humps.
const SECRET_WORDS = new Set([
  'TOKEN',
  'ACCESSTOKEN',
  'AUTHTOKEN',
  'KEY',
  'APIKEY',
  'PRIVATEKEY',
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASS',
  'PWD',
  'AUTH',
  'AUTHORIZATION',
  'CREDENTIAL',
  'CREDENTIALS',
  'COOKIE',
  'PAT',
]);
// "Bearer xyz": the scheme stays in servers.yaml, the credential moves.
const SCHEME_VALUE = /^(Bearer|Basic|Token)\s+(\S[\s\S]*)$/i;

/** One value moved out of an entry: where it was and the variable that now stands for it. */
export interface MovedSecret {
  server: string;
  field: 'env' | 'headers';
  key: string;
  variable: string;
}

/** Entries with their literal secrets replaced, the values for secrets.env, and what moved. */
export interface SecretsMove {
  servers: Record<string, Record<string, unknown>>;
  values: Record<string, string>;
  moved: MovedSecret[];
}

/** Whether an env var or header name says it holds a credential. */
export function isSecretName(name: string): boolean {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .some((word) => SECRET_WORDS.has(word));
}

/**
 * Replace the literal secrets of `servers` by `${VAR}`s. A variable is named after the env var
 * (or `<SERVER>_<HEADER>`), prefixed with the server or numbered when `taken` (secrets.env, the
 * environment) already gives that name another value, so an existing variable never stands in.
 */
export function moveLiteralSecrets(
  servers: Record<string, Record<string, unknown>>,
  taken: ReadonlyArray<Readonly<Record<string, string | undefined>>>,
): SecretsMove {
  const values: Record<string, string> = {};
  const moved: MovedSecret[] = [];
  const free = (name: string, value: string) => [...taken, values].every((holder) => !holder[name] || holder[name] === value);
  const variableFor = (candidates: string[], value: string): string => {
    const names = candidates.map(variableName);
    const found = names.find((name) => free(name, value));
    if (found) return found;
    const last = names.at(-1)!;
    for (let suffix = 2; ; suffix++) if (free(`${last}_${suffix}`, value)) return `${last}_${suffix}`;
  };
  const result: Record<string, Record<string, unknown>> = {};
  for (const [server, entry] of Object.entries(servers)) {
    const next = { ...entry };
    for (const field of ['env', 'headers'] as const) {
      const record = entry[field] as Record<string, string> | undefined;
      if (!record) continue;
      next[field] = Object.fromEntries(
        Object.entries(record).map(([key, value]) => {
          // A value that already references a variable, or is empty, holds nothing to move.
          if (!value || value.includes('${')) return [key, value];
          const scheme = SCHEME_VALUE.exec(value);
          if (!scheme && !isSecretName(key)) return [key, value];
          const secret = scheme ? scheme[2]! : value;
          const candidates = field === 'env' ? [key, `${server}_${key}`] : [`${server}_${key}`];
          const variable = variableFor(candidates, secret);
          values[variable] = secret;
          moved.push({ server, field, key, variable });
          return [key, scheme ? `${scheme[1]} \${${variable}}` : `\${${variable}}`];
        }),
      );
    }
    result[server] = next;
  }
  return { servers: result, values, moved };
}

function variableName(text: string): string {
  const name = text.toUpperCase().replace(/[^A-Z0-9_]+/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}
