// A fresh temp directory for each test of a suite, removed after it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** Registers the hooks; call the returned function inside a test (or a later hook) for the directory. */
export function useTempDir(prefix: string): () => string {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error('useTempDir: the directory exists only while a test runs');
    return dir;
  };
}
