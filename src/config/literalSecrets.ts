// Literal secrets in imported server entries: an env var or header whose name says it holds a
// credential (TOKEN, KEY, SECRET, PASSWORD, AUTH, …), or any value of the form "Bearer …"; the value
// of a command-line flag so named (`--api-key sk-…`, `--token=…`); a URL's query parameter so named
// (`?api_key=…`) and its password (`https://user:pass@…`), also for a URL in an env var or header
// value (`DATABASE_URL: postgres://…`) and a URL, header (`--header`) or env var (`-e NAME=…`) given in args. Each is replaced by a `${VAR}` reference and its value
// returned for secrets.env. Pure: reads no file.

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
// Words of a flag or parameter name that say its value is not the credential but about it
// (`--key-file`, `--token-url`, `--auth-type`, `--api-key-env`).
const ABOUT_SECRET_WORDS = new Set([
  'FILE',
  'PATH',
  'DIR',
  'URL',
  'URI',
  'ENDPOINT',
  'TYPE',
  'MODE',
  'METHOD',
  'HEADER',
  'ENV',
  'VAR',
  'NAME',
]);
// "Bearer xyz": the scheme stays in servers.yaml, the credential moves.
const SCHEME_VALUE = /^(Bearer|Basic|Token)\s+(\S[\s\S]*)$/i;
// A flag: `--name` or `-name`, with `=value` or without.
const FLAG = /^(--?)([A-Za-z][\w.-]*)(?:=([\s\S]*))?$/;
// A value that is a file's path, or a number or switch word, holds no credential.
const NOT_A_SECRET = /^(?:[/~]|\.\.?[/\\]|[A-Za-z]:[/\\]|\d+$|(?:true|false|yes|no|on|off)$)/i;
// A URL's userinfo password: scheme://user:PASSWORD@host, up to the last `@` before the path as a
// URL parser reads it, so an unencoded `@` in the password does not leave its end behind.
const URL_PASSWORD = /^([A-Za-z][\w+.-]*:\/\/[^/?#@:\s]*:)([^/?#\s]+)(@)/;
// Where a URL starts in an arg (a connection string, or `--db=postgres://…`).
const URL_START = /[A-Za-z][\w+.-]*:\/\//;
// Flags whose next arg is a header (mcp-remote, curl-like servers) or an env var (docker, podman).
const HEADER_FLAGS = new Set(['--header', '-H']);
const ENV_FLAGS = new Set(['--env', '-e']);
// A header in an arg: `Authorization: Bearer …`, `X-Api-Key:…`.
const HEADER_ARG = /^([\w-]+):(\s*)([\s\S]*)$/;
// An env var in an arg: `NAME=VALUE`.
const ENV_ARG = /^([A-Za-z_]\w*)=([\s\S]*)$/;

/** One value moved out of an entry: where it was and the variable that now stands for it. */
export interface MovedSecret {
  server: string;
  /**
   * Where it was: an env var or header (`key` its name, a URL in its value too); in args, a flag
   * (`key` the flag), a header or env var (`key` its name) or a URL; the url. In a URL other than an
   * env var's or header's, `key` is the query parameter, or `password`.
   */
  field: 'env' | 'headers' | 'args' | 'url';
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
  return wordsOf(name).some((word) => SECRET_WORDS.has(word));
}

// Whether a flag or query parameter so named takes a credential as its value (not a path to one).
function isSecretParameter(name: string): boolean {
  return isSecretName(name) && !wordsOf(name).some((word) => ABOUT_SECRET_WORDS.has(word));
}

// A name's words: split at `_`, `-`, `.` and camelCase humps, upper-cased.
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/);
}

// Whether a flag's or parameter's value may be a credential: not empty, not a reference, not a path or switch.
function mayBeSecret(value: string | undefined): value is string {
  return value !== undefined && value !== '' && !value.includes('${') && !NOT_A_SECRET.test(value);
}

/**
 * Replace the literal secrets of `servers` by `${VAR}`s. A variable is named after the env var (in
 * env, or after `-e` in args), else `<SERVER>_<NAME>` of the header, flag or query parameter
 * (`<SERVER>_PASSWORD` for a URL's password); prefixed with the server or numbered when `taken`
 * (secrets.env, the environment) already gives that name another value, so an existing variable never stands in.
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
  // Put `secret` in secrets.env under the first free candidate name, and say so; the ${VAR} text.
  const move = (server: string, field: MovedSecret['field'], key: string, secret: string, candidates: string[]): string => {
    const variable = variableFor(candidates, secret);
    values[variable] = secret;
    moved.push({ server, field, key, variable });
    return `\${${variable}}`;
  };
  const result: Record<string, Record<string, unknown>> = {};
  for (const [server, entry] of Object.entries(servers)) {
    const next = { ...entry };
    for (const field of ['env', 'headers'] as const) {
      const record = entry[field] as Record<string, string> | undefined;
      if (!record) continue;
      next[field] = Object.fromEntries(
        Object.entries(record).map(([key, value]) => {
          const candidates = field === 'env' ? [key, `${server}_${key}`] : [`${server}_${key}`];
          return [
            key,
            movedCredential(
              key,
              value,
              (secret) => move(server, field, key, secret, candidates),
              (urlKey, secret) => move(server, field, key, secret, [`${server}_${urlKey}`]),
            ),
          ];
        }),
      );
    }
    if (Array.isArray(entry.args))
      next.args = movedArgs(entry.args as unknown[], (key, secret, envVar) =>
        move(server, 'args', key, secret, envVar ? [key, `${server}_${key}`] : [`${server}_${key.replace(/^-+/, '')}`]),
      );
    if (typeof entry.url === 'string')
      next.url = movedUrlSecrets(entry.url, (key, secret) => move(server, 'url', key, secret, [`${server}_${key}`]));
    result[server] = next;
  }
  return { servers: result, values, moved };
}

// The value of an env var or header so named, with its credential replaced: all of it under a
// credential name, else what follows a `Bearer`/`Basic`/`Token` scheme, which stays, else the
// secrets of a URL in it (a connection string), moved by `moveInUrl` as a url's are.
function movedCredential(
  name: string,
  value: string,
  move: (secret: string) => string,
  moveInUrl: (key: string, secret: string) => string,
): string {
  // A value that already references a variable, or is empty, holds nothing to move.
  if (!value || value.includes('${')) return value;
  const scheme = SCHEME_VALUE.exec(value);
  if (scheme) return `${scheme[1]} ${move(scheme[2]!)}`;
  return isSecretName(name) ? move(value) : movedUrlSecretsIn(value, moveInUrl);
}

// A command line with its literal secrets replaced: the values of credential flags (`--api-key=VALUE`
// in place, and the argument after a bare `--api-key`), the header after `--header` and the env var
// after `-e` as in headers and env, and the secrets of any URL. `move(key, value, envVar)` gives
// the text that stands for a value; an env var's keeps its own name.
function movedArgs(args: readonly unknown[], move: (key: string, secret: string, envVar?: boolean) => string): unknown[] {
  const next = [...args];
  for (let index = 0; index < next.length; index++) {
    const arg = next[index];
    if (typeof arg !== 'string') continue;
    const previous = args[index - 1];
    const header = typeof previous === 'string' && HEADER_FLAGS.has(previous) ? HEADER_ARG.exec(arg) : null;
    if (header) {
      const [, name = '', space = '', value = ''] = header;
      next[index] = `${name}:${space}${movedCredential(name, value, (secret) => move(name, secret), move)}`;
      continue;
    }
    const envVar = typeof previous === 'string' && ENV_FLAGS.has(previous) ? ENV_ARG.exec(arg) : null;
    if (envVar) {
      const [, name = '', value = ''] = envVar;
      next[index] = `${name}=${movedCredential(name, value, (secret) => move(name, secret, true), move)}`;
      continue;
    }
    const flag = FLAG.exec(arg);
    if (!flag || !isSecretParameter(flag[2]!)) {
      next[index] = movedUrlSecretsIn(arg, move);
      continue;
    }
    const [, dashes, name, inline] = flag;
    if (inline !== undefined) {
      if (mayBeSecret(inline)) next[index] = `${dashes}${name}=${move(`${dashes}${name}`, inline)}`;
      continue;
    }
    const value = next[index + 1];
    if (typeof value === 'string' && !value.startsWith('-') && mayBeSecret(value)) next[++index] = move(`${dashes}${name}`, value);
  }
  return next;
}

// A URL with its password and the values of credential query parameters replaced, as written (a
// value stays percent-encoded, so the URL expands back to exactly what it was).
function movedUrlSecrets(url: string, move: (key: string, secret: string) => string): string {
  const userinfo = URL_PASSWORD.exec(url);
  // Any password is a secret, a number included: only a reference stays.
  let next =
    userinfo && !userinfo[2]!.includes('${')
      ? url.replace(URL_PASSWORD, (_, head: string, password: string, at: string) => `${head}${move('password', password)}${at}`)
      : url;
  const queryStart = next.indexOf('?');
  if (queryStart === -1) return next;
  const fragmentStart = next.indexOf('#', queryStart);
  const queryEnd = fragmentStart === -1 ? next.length : fragmentStart;
  const query = next
    .slice(queryStart + 1, queryEnd)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return pair;
      const [key, value] = [pair.slice(0, equals), pair.slice(equals + 1)];
      return isSecretParameter(safeDecode(key)) && mayBeSecret(value) ? `${key}=${move(safeDecode(key), value)}` : pair;
    })
    .join('&');
  next = `${next.slice(0, queryStart + 1)}${query}${next.slice(queryEnd)}`;
  return next;
}

// `text` with the secrets of the URL it holds from where the URL starts (`--db=postgres://…`) replaced.
function movedUrlSecretsIn(text: string, move: (key: string, secret: string) => string): string {
  const urlStart = text.search(URL_START);
  return urlStart === -1 ? text : text.slice(0, urlStart) + movedUrlSecrets(text.slice(urlStart), move);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function variableName(text: string): string {
  // `brave_--api-key` → BRAVE_API_KEY: runs of other characters become one `_`, none at either end.
  const name = text
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

// A quoted key and its quoted value, as JSON and TOML write them: `"NAME": "value"`, `NAME = "value"`.
const QUOTED_PAIR = /(["']?)([A-Za-z_][\w.-]*)\1(\s*[:=]\s*)(["'])((?:\\.|(?!\4)[^\\\n])*)\4/g;
const SCHEME_IN_TEXT = /\b(Bearer|Basic)(\s+)([^\s"'\\,]+)/gi;
const URL_PASSWORD_IN_TEXT = /([A-Za-z][\w+.-]*:\/\/[^/?#@:\s"']*:)([^/?#\s"'@]+)(@)/g;
const FLAG_IN_TEXT = /(--?)([A-Za-z][\w.-]*)=([^\s"'\\,]+)/g;
// A quoted credential flag and the quoted arg after it, on one line or the next line of a diff.
const FLAG_THEN_VALUE = /(["']--?([A-Za-z][\w.-]*)["'][ \t]*,?[ \t]*(?:\n[-+ ][ \t]*)?)(["'])([^"'\\\n]*)\3/g;
const MASK = '[hidden]';

/**
 * `text` (a diff or listing of a client's config file) with what looks like a literal secret
 * replaced by "[hidden]": the value of a credential-named key, a "Bearer …" credential, a URL's
 * password, a credential flag's `=value`, and each of `known` (secrets found in the entries).
 */
export function maskLiteralSecrets(text: string, known: readonly string[] = []): string {
  let masked = text;
  // Longest first, so a secret that holds another is hidden whole.
  for (const value of [...known].filter(mayBeSecret).sort((a, b) => b.length - a.length)) masked = masked.replaceAll(value, MASK);
  return masked
    .replace(QUOTED_PAIR, (pair: string, quote: string, name: string, separator: string, valueQuote: string, value: string) =>
      isSecretName(name) && mayBeSecret(value) && !SCHEME_VALUE.test(value)
        ? `${quote}${name}${quote}${separator}${valueQuote}${MASK}${valueQuote}`
        : pair,
    )
    .replace(SCHEME_IN_TEXT, (whole: string, scheme: string, space: string, value: string) =>
      mayBeSecret(value) && value !== MASK ? `${scheme}${space}${MASK}` : whole,
    )
    .replace(URL_PASSWORD_IN_TEXT, (whole: string, start: string, password: string, at: string) =>
      mayBeSecret(password) ? `${start}${MASK}${at}` : whole,
    )
    .replace(FLAG_THEN_VALUE, (whole: string, flag: string, name: string, quote: string, value: string) =>
      isSecretParameter(name) && mayBeSecret(value) && !value.startsWith('-') ? `${flag}${quote}${MASK}${quote}` : whole,
    )
    .replace(FLAG_IN_TEXT, (whole: string, dashes: string, name: string, value: string) =>
      isSecretParameter(name) && mayBeSecret(value) ? `${dashes}${name}=${MASK}` : whole,
    );
}
