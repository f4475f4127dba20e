// A throwaway PostgreSQL server for tests: initdb into a temp dir, pg_ctl on a free loopback port
// with fsync off, stopped and removed at the end. Runs the binaries as the `postgres` user when
// the tests run as root (initdb refuses root). Knows nothing of loadout's store.
import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './http.js';

const run = promisify(execFile);

/** The superuser's password: TCP connections need it (scram), so a wrong one is really refused. */
export const POSTGRES_TEST_PASSWORD = 'loadout-test';

/** The one line a test prints when the binaries are missing. */
export const POSTGRES_MISSING =
  'PostgreSQL server binaries not found (initdb, pg_ctl): install them with `apt-get install -y postgresql` (Debian), or name their folder in LOADOUT_TEST_POSTGRES_BIN';

/** A running test server. */
export interface PostgresServer {
  /** postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stop and remove the data dir. */
  destroy(): Promise<void>;
}

/**
 * The folder holding initdb and pg_ctl: $LOADOUT_TEST_POSTGRES_BIN when set (and only it), else the
 * newest under /usr/lib/postgresql, else PATH; undefined when none.
 */
export async function postgresBinDir(): Promise<string | undefined> {
  const chosen = process.env.LOADOUT_TEST_POSTGRES_BIN;
  if (chosen) return existsSync(path.join(chosen, 'initdb')) && existsSync(path.join(chosen, 'pg_ctl')) ? chosen : undefined;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? (await readdir(root)).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const dir = path.join(root, version, 'bin');
    if (existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

/** initdb and start a server; throws POSTGRES_MISSING when the binaries are not installed. */
export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = await postgresBinDir();
  if (!bin) throw new Error(POSTGRES_MISSING);
  const root = await mkdtemp(path.join(tmpdir(), 'loadout-pg-'));
  const dataDir = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  const exec = async (file: string, args: string[]) => {
    const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, file), ...args]] : [path.join(bin, file), args];
    await run(command, argv, { timeout: 60_000 });
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(root, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(root, 0o700);
  const pwFile = path.join(root, 'pwfile');
  await writeFile(pwFile, `${POSTGRES_TEST_PASSWORD}\n`, { mode: 0o644 });
  await exec('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwFile}`,
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const start = () => exec('pg_ctl', ['-D', dataDir, '-o', options, '-l', path.join(root, 'log'), '-w', 'start']);
  const stop = () => exec('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  await start();
  let running = true;
  return {
    url: `postgres://postgres:${POSTGRES_TEST_PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await start();
      running = true;
    },
    async stop() {
      await stop();
      running = false;
    },
    async destroy() {
      try {
        if (running) await stop();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}
