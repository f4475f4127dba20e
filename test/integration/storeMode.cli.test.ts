// The one-shot commands in store mode (`--store` / LOADOUT_STORE_URL): refresh, toolset, list,
// status and search read and write the team store, never the data dir's state files, and never
// write servers.yaml.
import { readFile, readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

describe('one-shot commands in store mode', () => {
  const databaseUrl = usePostgresDatabase();
  let dirs: TempDirs;

  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(() => dirs.cleanup());

  it('refresh, toolset, list, status and search keep state in the store and leave servers.yaml as written', async () => {
    const file = await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const written = await readFile(file, 'utf8');
    const env = { LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: databaseUrl() };
    const loadout = async (...args: string[]) => {
      const run = await runCli(dirs, args, { env });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout;
    };

    expect(await loadout('refresh')).toContain('echo');
    expect(await loadout('list', '--json')).toContain('echo.echo');
    expect(JSON.parse(await loadout('status', '--json'))).toMatchObject({ servers: [expect.objectContaining({ name: 'echo' })] });
    expect(await loadout('search', 'echo the text back')).toContain('echo.echo');

    await loadout('toolset', 'create', 'talk', 'echo.echo');
    await loadout('toolset', 'equip', 'talk');
    const listed = JSON.parse(await loadout('toolset', 'list', '--json')) as { remembered: string; toolsets: Array<{ name: string }> };
    expect(listed.remembered).toBe('talk');
    expect(listed.toolsets.map((toolset) => toolset.name)).toEqual(['talk']);
    expect(await loadout('toolset', 'delete', 'talk')).toContain('it will no longer be equipped at start');
    expect(JSON.parse(await loadout('toolset', 'list', '--json'))).toMatchObject({ remembered: null, toolsets: [] });

    expect(await readFile(file, 'utf8')).toBe(written);
    expect(await readdir(dirs.configDir)).not.toContain('toolsets');
    const dataFiles = await readdir(dirs.dataDir);
    for (const stateFile of ['catalog.json', 'state.json']) expect(dataFiles).not.toContain(stateFile);
  });
});
