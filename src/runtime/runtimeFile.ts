// The small file a running gateway publishes in `<data dir>/runtime/<pid>.json` (its config dir
// and connected servers), so `loadout status` can tell what is connected now. Removed on close;
// readers ignore files whose process is gone.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { enabledServerNames, readTextIfExists, writeTextAtomic, type LoadoutPaths } from '../config/index.js';
import type { ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';

const RuntimeSchema = z.looseObject({
  pid: z.number().int(),
  configDir: z.string(),
  startedAt: z.string(),
  connected: z.array(z.string()),
});
/** What a running gateway publishes about itself. */
type GatewayRuntime = z.infer<typeof RuntimeSchema>;

function runtimeDir(paths: LoadoutPaths): string {
  return path.join(paths.dataDir, 'runtime');
}

/** Publishes this process's runtime file and keeps it current on pool events. */
export class RuntimeFile {
  readonly #file: string;
  readonly #base: Omit<GatewayRuntime, 'connected'>;
  readonly #pool: ServerPool;
  readonly #logger: Logger;
  #unsubscribe: (() => void) | undefined;
  #writes: Promise<void> = Promise.resolve();
  #closed: Promise<void> | undefined;

  constructor(paths: LoadoutPaths, pool: ServerPool, logger: Logger) {
    this.#file = path.join(runtimeDir(paths), `${process.pid}.json`);
    this.#base = { pid: process.pid, configDir: paths.configDir, startedAt: new Date().toISOString() };
    this.#pool = pool;
    this.#logger = logger;
  }

  /** Write the file now and after every connection event. */
  start(): void {
    this.#unsubscribe = this.#pool.onEvent(() => this.#write());
    this.#write();
  }

  /** Stop updating and remove the file. Runs once. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#unsubscribe?.();
      await this.#writes;
      await rm(this.#file, { force: true });
    })();
    return this.#closed;
  }

  // Writes are chained so an older snapshot never lands after a newer one.
  #write(): void {
    if (this.#closed) return;
    const connected = enabledServerNames(this.#pool.configs).filter((server) => this.#pool.isConnected(server));
    const text = JSON.stringify({ ...this.#base, connected });
    this.#writes = this.#writes
      .then(() => (this.#closed ? undefined : writeTextAtomic(this.#file, text)))
      .catch((error: unknown) => this.#logger.debug({ mod: 'gateway', err: errorMessage(error) }, 'runtime file not written'));
  }
}

/** Runtime files of live gateways serving this config dir. */
export async function readRunningGateways(paths: LoadoutPaths): Promise<GatewayRuntime[]> {
  let entries: string[];
  try {
    entries = await readdir(runtimeDir(paths));
  } catch {
    return [];
  }
  const running: GatewayRuntime[] = [];
  for (const entry of entries.filter((name) => /^\d+\.json$/.test(name))) {
    const text = await readTextIfExists(path.join(runtimeDir(paths), entry)).catch(() => undefined);
    if (text === undefined) continue;
    let parsed: ReturnType<typeof RuntimeSchema.safeParse>;
    try {
      parsed = RuntimeSchema.safeParse(JSON.parse(text));
    } catch {
      continue;
    }
    if (parsed.success && parsed.data.configDir === paths.configDir && isProcessAlive(parsed.data.pid)) running.push(parsed.data);
  }
  return running;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
