// Which imported values count as literal secrets, and the ${VAR} names they get.
import { describe, expect, it } from 'vitest';
import { isSecretName, maskLiteralSecrets, moveLiteralSecrets } from './literalSecrets.js';

describe('isSecretName', () => {
  it('knows credential words in any case or separator, and leaves other names alone', () => {
    for (const name of ['GITHUB_PERSONAL_ACCESS_TOKEN', 'X-API-Key', 'apiKey', 'DB_PASSWORD', 'Authorization', 'client.secret', 'Cookie'])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ['LOG_LEVEL', 'MONKEY_MODE', 'X-Trace', 'DATABASE_URL', 'PATH', 'TOKENIZER_MODEL'])
      expect(isSecretName(name), name).toBe(false);
  });
});

describe('moveLiteralSecrets', () => {
  it('moves secret-named values and Bearer values, keeps references, schemes and other values, and mutates nothing', () => {
    const servers = {
      gh: { command: 'npx', env: { GITHUB_TOKEN: 'ghp_1', REF_TOKEN: '${REF}', LOG_LEVEL: 'debug', EMPTY_KEY: '' } },
      api: { type: 'http', url: 'https://x/mcp', headers: { Authorization: 'Bearer abc', 'X-Custom': 'Token def', 'X-Trace': 'on' } },
    };
    const copy = structuredClone(servers);
    const move = moveLiteralSecrets(servers, []);
    expect(servers).toEqual(copy);
    expect(move.servers.gh!.env).toEqual({ GITHUB_TOKEN: '${GITHUB_TOKEN}', REF_TOKEN: '${REF}', LOG_LEVEL: 'debug', EMPTY_KEY: '' });
    expect(move.servers.api!.headers).toEqual({
      Authorization: 'Bearer ${API_AUTHORIZATION}',
      'X-Custom': 'Token ${API_X_CUSTOM}',
      'X-Trace': 'on',
    });
    expect(move.values).toEqual({ GITHUB_TOKEN: 'ghp_1', API_AUTHORIZATION: 'abc', API_X_CUSTOM: 'def' });
    expect(move.moved.map(({ server, field, key }) => `${server} ${field} ${key}`)).toEqual([
      'gh env GITHUB_TOKEN',
      'api headers Authorization',
      'api headers X-Custom',
    ]);
  });

  it('never reuses a name held with another value (secrets.env, the environment, another server), and shares one held with the same', () => {
    const servers = {
      a: { command: 'a', env: { API_KEY: 'one' } },
      b: { command: 'b', env: { API_KEY: 'two' } },
      c: { command: 'c', env: { API_KEY: 'one', SHELL_TOKEN: 's' } },
    };
    const move = moveLiteralSecrets(servers, [{ B_API_KEY: 'other' }, { SHELL_TOKEN: 'from-shell' }]);
    expect(move.values).toEqual({ API_KEY: 'one', B_API_KEY_2: 'two', C_SHELL_TOKEN: 's' });
    expect(move.servers.c!.env).toEqual({ API_KEY: '${API_KEY}', SHELL_TOKEN: '${C_SHELL_TOKEN}' });
  });

  it('moves the values of credential flags in args, as --flag=VALUE or --flag VALUE, and leaves paths, switches, references and other flags', () => {
    const args = [
      '-y',
      '@brave/brave-search-mcp-server',
      '--api-key',
      'BSA-literal-1',
      '--token=ghp_literal_2',
      '--auth-type',
      'bearer',
      '--key-file',
      '/home/me/key.pem',
      '--password',
      './secret.txt',
      '--api-key-env=BRAVE_KEY',
      '--secret',
      '--verbose',
      '--access-token',
      '${ALREADY}',
      '--port',
      '8080',
    ];
    const move = moveLiteralSecrets({ brave: { command: 'npx', args } }, []);
    expect(move.servers.brave!.args).toEqual([
      '-y',
      '@brave/brave-search-mcp-server',
      '--api-key',
      '${BRAVE_API_KEY}',
      '--token=${BRAVE_TOKEN}',
      ...args.slice(5),
    ]);
    expect(move.values).toEqual({ BRAVE_API_KEY: 'BSA-literal-1', BRAVE_TOKEN: 'ghp_literal_2' });
    expect(move.moved.map(({ field, key, variable }) => `${field} ${key} ${variable}`)).toEqual([
      'args --api-key BRAVE_API_KEY',
      'args --token BRAVE_TOKEN',
    ]);
  });

  it("moves a URL's password and credential query parameters as written, and leaves the rest of the URL alone", () => {
    const servers = {
      smithery: { type: 'http', url: 'https://server.smithery.ai/x/mcp?api_key=sk%2Fliteral&profile=work#top' },
      basic: { type: 'http', url: 'https://me:hunter2@mcp.example.com/mcp?token=${SET}&page=2' },
      plain: { type: 'http', url: 'https://mcp.example.com/mcp?auth_url=https%3A%2F%2Flogin&keyword=x' },
    };
    const move = moveLiteralSecrets(servers, []);
    expect(move.servers.smithery!.url).toBe('https://server.smithery.ai/x/mcp?api_key=${SMITHERY_API_KEY}&profile=work#top');
    expect(move.servers.basic!.url).toBe('https://me:${BASIC_PASSWORD}@mcp.example.com/mcp?token=${SET}&page=2');
    expect(move.servers.plain!.url).toBe(servers.plain.url);
    // Kept percent-encoded: expanded, the URL is exactly what it was.
    expect(move.values).toEqual({ SMITHERY_API_KEY: 'sk%2Fliteral', BASIC_PASSWORD: 'hunter2' });
    expect(move.moved.map(({ server, field, key }) => `${server} ${field} ${key}`)).toEqual(['smithery url api_key', 'basic url password']);
  });

  it("moves the secrets of a URL in args (a connection string, or a flag's value) as for url, and keeps URLs without any", () => {
    const args = [
      'postgresql://postgres:123456@localhost:5432/db',
      '--db=mysql://root:p@ss@db/x?sslmode=require',
      '--server',
      'https://mcp.example.com/mcp?api_key=k-1&region=eu',
      'https://example.com/docs?page=2',
      'postgresql://${PG_USER}:${PG_PASSWORD}@localhost/db',
      '--notify=https://hooks.example.com:8443 then ops@example.com',
    ];
    const move = moveLiteralSecrets({ pg: { command: 'npx', args } }, []);
    expect(move.servers.pg!.args).toEqual([
      'postgresql://postgres:${PG_PASSWORD}@localhost:5432/db',
      '--db=mysql://root:${PG_PASSWORD_2}@db/x?sslmode=require',
      '--server',
      'https://mcp.example.com/mcp?api_key=${PG_API_KEY}&region=eu',
      ...args.slice(4),
    ]);
    expect(move.values).toEqual({ PG_PASSWORD: '123456', PG_PASSWORD_2: 'p@ss', PG_API_KEY: 'k-1' });
    expect(move.moved.map(({ field, key }) => `${field} ${key}`)).toEqual(['args password', 'args password', 'args api_key']);
  });

  it('moves the credential of a header given in args (mcp-remote --header) and of an env var given in args (docker -e NAME=VALUE)', () => {
    const args = [
      'run',
      '-e',
      'GITHUB_PERSONAL_ACCESS_TOKEN=ghp_literal_3',
      '--env',
      'LOG_LEVEL=debug',
      '-e',
      'GITHUB_TOOLSETS',
      'ghcr.io/github/github-mcp-server',
      'mcp-remote',
      'https://remote.example.com/sse',
      '--header',
      'Authorization: Bearer hdr-literal-4',
      '-H',
      'X-Api-Key:key-literal-5',
      '--header',
      'X-Trace: on',
      '--header',
      'Authorization:${AUTH_HEADER}',
    ];
    const move = moveLiteralSecrets({ gh: { command: 'docker', args } }, []);
    expect(move.servers.gh!.args).toEqual([
      'run',
      '-e',
      'GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_PERSONAL_ACCESS_TOKEN}',
      ...args.slice(3, 11),
      'Authorization: Bearer ${GH_AUTHORIZATION}',
      '-H',
      'X-Api-Key:${GH_X_API_KEY}',
      ...args.slice(14),
    ]);
    expect(move.values).toEqual({
      GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_literal_3',
      GH_AUTHORIZATION: 'hdr-literal-4',
      GH_X_API_KEY: 'key-literal-5',
    });
    expect(move.moved.map(({ field, key }) => `${field} ${key}`)).toEqual([
      'args GITHUB_PERSONAL_ACCESS_TOKEN',
      'args Authorization',
      'args X-Api-Key',
    ]);
  });

  it("moves the whole of a url's password, an unencoded @ or a number included", () => {
    const servers = {
      a: { type: 'http', url: 'https://me:p@ss@mcp.example.com/mcp' },
      b: { type: 'http', url: 'https://me:123456@mcp.example.com/mcp' },
    };
    const move = moveLiteralSecrets(servers, []);
    expect(move.servers.a!.url).toBe('https://me:${A_PASSWORD}@mcp.example.com/mcp');
    expect(move.servers.b!.url).toBe('https://me:${B_PASSWORD}@mcp.example.com/mcp');
    expect(move.values).toEqual({ A_PASSWORD: 'p@ss', B_PASSWORD: '123456' });
  });

  it('moves the secrets of a URL held in an env var, whether in env or given in args (docker -e), as for url', () => {
    const servers = {
      pg: { command: 'npx', env: { DATABASE_URL: 'postgresql://postgres:123456@localhost:5432/db', LOG_LEVEL: 'debug' } },
      box: { command: 'docker', args: ['run', '-e', 'REDIS_URL=redis://default:s3cret@cache:6379', 'img'] },
    };
    const move = moveLiteralSecrets(servers, []);
    expect(move.servers.pg!.env).toEqual({ DATABASE_URL: 'postgresql://postgres:${PG_PASSWORD}@localhost:5432/db', LOG_LEVEL: 'debug' });
    expect(move.servers.box!.args).toEqual(['run', '-e', 'REDIS_URL=redis://default:${BOX_PASSWORD}@cache:6379', 'img']);
    expect(move.values).toEqual({ PG_PASSWORD: '123456', BOX_PASSWORD: 's3cret' });
    expect(move.moved.map(({ server, field, key }) => `${server} ${field} ${key}`)).toEqual(['pg env DATABASE_URL', 'box args password']);
  });
});

describe('maskLiteralSecrets', () => {
  it('hides credential-named values, Bearer credentials, URL passwords and credential flags, and leaves ${VAR}s and the rest', () => {
    const text = [
      '-      "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abc123",',
      '+      "GITHUB_TOKEN": "${GITHUB_TOKEN}",',
      '       "LOG_LEVEL": "debug",',
      '-      "Authorization": "Bearer sk-xyz",',
      '-      "url": "https://me:pa55@example.com/mcp",',
      '-      "args": ["--api-key", "sk-flag", "--token=tk-inline", "--key-file", "/home/me/key"],',
      '-        "--password",',
      '-        "hunter2",',
      'API_KEY = "toml-secret"',
    ].join('\n');
    expect(maskLiteralSecrets(text)).toBe(
      [
        '-      "GITHUB_PERSONAL_ACCESS_TOKEN": "[hidden]",',
        '+      "GITHUB_TOKEN": "${GITHUB_TOKEN}",',
        '       "LOG_LEVEL": "debug",',
        '-      "Authorization": "Bearer [hidden]",',
        '-      "url": "https://me:[hidden]@example.com/mcp",',
        '-      "args": ["--api-key", "[hidden]", "--token=[hidden]", "--key-file", "/home/me/key"],',
        '-        "--password",',
        '-        "[hidden]",',
        'API_KEY = "[hidden]"',
      ].join('\n'),
    );
  });

  it('hides each known secret wherever it appears', () => {
    expect(maskLiteralSecrets('"args": ["serve", "s3cr3t-value"]', ['s3cr3t-value'])).toBe('"args": ["serve", "[hidden]"]');
  });
});
