import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { ServersFile } from './schema.js';
import { ServersFileWatcher } from './serversFileWatcher.js';
import { loadServersConfig } from './serversFileCache.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('ServersFileWatcher', () => {
  const tempDir = useTempDir('loadout-watch-');
  let dir: string;
  let watcher: ServersFileWatcher | undefined;
  const errors: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push((JSON.parse(line) as { msg: string }).msg) });
  beforeEach(() => {
    dir = tempDir();
    errors.length = 0;
  });
  afterEach(() => {
    watcher?.close();
  });

  it('applies a burst of saves once, including a save by rename, and skips malformed versions', async () => {
    const file = path.join(dir, 'servers.yaml');
    await writeFile(file, 'servers: {}\n');
    const applied: ServersFile[] = [];
    const apply = (config: ServersFile): void => void applied.push(config);
    watcher = new ServersFileWatcher({ file, logger, apply, debounceMs: 100 });
    await watcher.start();
    for (let i = 0; i < 5; i++) await writeFile(file, `servers:\n  s${i}: { command: x }\n`);
    await until(() => applied.length > 0);
    // A later save is applied after anything the burst still had pending, so it bounds the check.
    await writeFile(file, 'servers:\n  after: { command: x }\n');
    await until(() => applied.length > 1);
    expect(applied.map((config) => Object.keys(config.servers))).toEqual([['s4'], ['after']]);
    applied.length = 0;

    await writeFile(path.join(dir, 'tmp'), 'gateway:\n  relist_wait_ms: soon\n');
    await rename(path.join(dir, 'tmp'), file);
    await until(() => errors.length > 0);
    expect(errors).toEqual([expect.stringMatching(/servers\.yaml:2:\d+: .*keeping the last good config$/)]);
    expect(applied).toHaveLength(0);

    await writeFile(path.join(dir, 'tmp'), 'servers:\n  fixed: { command: x }\n');
    await rename(path.join(dir, 'tmp'), file);
    await until(() => applied.length > 0);
    expect(Object.keys(applied[0]!.servers)).toEqual(['fixed']);
  });

  it('applies the valid servers of a file with one invalid entry, and hands over that entry with its problem', async () => {
    const file = path.join(dir, 'servers.yaml');
    await writeFile(file, 'servers: {}\n');
    const applied: { servers: string[]; broken: [string, string][] }[] = [];
    const apply = (config: ServersFile, broken: ReadonlyMap<string, string>): void =>
      void applied.push({ servers: Object.keys(config.servers), broken: [...broken] });
    watcher = new ServersFileWatcher({ file, logger, apply, debounceMs: 50 });
    await watcher.start();
    await writeFile(file, 'servers:\n  good: { command: x }\n  bad: { command: 1 }\n');
    await until(() => applied.length > 0);
    expect(applied).toEqual([
      { servers: ['good'], broken: [['bad', expect.stringMatching(/servers\.yaml:3:\d+: .*servers\.bad\.command$/)]] },
    ]);
    // The entry is named by `apply`'s owner, which knows whether it is news.
    expect(errors).toEqual([]);
  });

  it('hands a file that does not parse to reject, and keeps each good one as the last good parse', async () => {
    const file = path.join(dir, 'servers.yaml');
    const cacheFile = path.join(dir, 'servers.parsed.json');
    await writeFile(file, 'servers: {}\n');
    const applied: string[][] = [];
    const rejected: string[] = [];
    watcher = new ServersFileWatcher({
      file,
      logger,
      cacheFile,
      apply: (config) => void applied.push(Object.keys(config.servers)),
      reject: (problem) => void rejected.push(problem),
      debounceMs: 50,
    });
    await watcher.start();
    await writeFile(file, 'servers:\n  good: { command: x }\n');
    await until(() => applied.length > 0);
    await writeFile(file, 'servers:\n  good: { command: [x }\n');
    await until(() => rejected.length > 0);
    expect(rejected).toEqual([expect.stringMatching(/servers\.yaml:2:\d+: /)]);
    const lastGood = await loadServersConfig(file, cacheFile, { lastGoodOnError: true });
    expect(Object.keys(lastGood.config.servers)).toEqual(['good']);
    expect(lastGood.fileProblem?.servingLastGood).toBe(true);
  });
});
