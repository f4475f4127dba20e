// Which imported values count as literal secrets, and the ${VAR} names they get.
import { describe, expect, it } from 'vitest';
import { isSecretName, moveLiteralSecrets } from './literalSecrets.js';

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
});
