// secrets.env: its format, its mode, and the expansion environment that reads it without handing it to children.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { expandEnv } from './envExpand.js';
import { addSecrets, expansionEnv, parseSecretsEnv, readSecretsFile } from './secretsFile.js';

describe('secrets.env', () => {
  const dir = useTempDir('loadout-secrets-');

  it('round-trips values with spaces, quotes and newlines, and is written 0600', async () => {
    const file = path.join(dir(), 'secrets.env');
    const values = { PLAIN: 'abc=def', SPACED: ' padded ', QUOTED: '"q"', LINES: 'a\nb' };
    await addSecrets(file, values);
    await addSecrets(file, { PLAIN: 'abc=def', MORE: 'x' });
    expect(await readSecretsFile(file)).toEqual({ ...values, MORE: 'x' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await expect(addSecrets(file, { PLAIN: 'changed' })).rejects.toThrow(/already holds another value for PLAIN/);
  });

  it('names the line of a malformed entry', () => {
    expect(() => parseSecretsEnv('# note\nGOOD=1\nnot a line\n', '/cfg/secrets.env')).toThrow('/cfg/secrets.env:3: expected NAME=value');
  });

  it('expands ${VAR} from the file where the environment leaves it unset, sees edits, and spreads only the environment', async () => {
    const file = path.join(dir(), 'secrets.env');
    await writeFile(file, 'TOKEN=from-file\nSHADOWED=from-file\n');
    const env = expansionEnv(file, { PATH: '/bin', SHADOWED: 'from-env', EMPTY: '' });
    expect(expandEnv('${TOKEN} ${SHADOWED}', env, 'test')).toBe('from-file from-env');
    expect({ ...env }).toEqual({ PATH: '/bin', SHADOWED: 'from-env', EMPTY: '' });
    await writeFile(file, 'TOKEN=rotated-value\n');
    expect(env.TOKEN).toBe('rotated-value');
    expect(await readFile(file, 'utf8')).toContain('rotated');
  });
});
