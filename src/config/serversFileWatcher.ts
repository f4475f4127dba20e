// Watches servers.yaml while the gateway runs and hands each new valid config to `apply`. Watches
// the directory (editors save by writing a new file and renaming it over the old one), debounces
// bursts, and keeps the last good config when the file is malformed, logging one error per problem
// and handing it to `reject`. A good parse is kept as the data dir's parsed copy (the last good parse).
import { mkdir } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { errorMessage, isLoadoutError, type Logger } from '../shared/index.js';
import type { ServersFile } from './schema.js';
import { parseServersFile } from './serversFile.js';
import { loadServersConfig } from './serversFileCache.js';
import { readTextIfExists } from './safeWrite.js';

/** Options of a servers.yaml watcher. */
interface ServersFileWatcherOptions {
  file: string;
  logger: Logger;
  /**
   * Receives each config read after a change (possibly equal to the current one), without the
   * invalid server entries, which come with their problem; awaited before the next.
   */
  apply(config: ServersFile, brokenServers: ReadonlyMap<string, string>): void | Promise<void>;
  /** Receives the parser's file:line:col problem each time the file is read and does not parse. */
  reject?(problem: string): void;
  /** The data dir's parsed copy, kept as the last good parse (without it, nothing is written). */
  cacheFile?: string;
  /** Quiet time after the last change before the file is read. */
  debounceMs?: number;
}

const DEFAULT_DEBOUNCE_MS = 150;

/** Reloads servers.yaml on change. */
export class ServersFileWatcher {
  readonly #options: ServersFileWatcherOptions;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> = Promise.resolve();
  #lastText: string | undefined;
  #lastProblem: string | undefined;
  #closed = false;

  constructor(options: ServersFileWatcherOptions) {
    this.#options = options;
  }

  /** Start watching. */
  async start(): Promise<void> {
    const dir = path.dirname(this.#options.file);
    await mkdir(dir, { recursive: true });
    const name = path.basename(this.#options.file);
    this.#watcher = watch(dir, { persistent: false }, (_event, changed) => {
      if (changed === null || changed.toString() === name) this.#schedule();
    });
    this.#watcher.on('error', (error) =>
      this.#options.logger.warn({ mod: 'config', err: errorMessage(error) }, 'watching servers.yaml failed; edits need a restart'),
    );
  }

  /** Stop watching. Safe to call more than once. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#watcher?.close();
  }

  /** Resolves after any reload in progress (for tests and orderly shutdown). */
  settled(): Promise<void> {
    return this.#reloading;
  }

  #schedule(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      // Reloads run one after another so an older read never applies after a newer one.
      this.#reloading = this.#reloading.then(() => this.#reload());
    }, this.#options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
    this.#timer.unref();
  }

  async #reload(): Promise<void> {
    if (this.#closed) return;
    const { file, logger } = this.#options;
    let text: string | undefined;
    try {
      text = await readTextIfExists(file);
    } catch (error) {
      this.#report(`${file} could not be read (${errorMessage(error)})`);
      return;
    }
    if (text === undefined) {
      this.#report(`${file} was removed`);
      return;
    }
    if (text === this.#lastText) return;
    let loaded: { config: ServersFile; brokenServers: ReadonlyMap<string, string> };
    try {
      const { cacheFile } = this.#options;
      loaded = cacheFile ? await loadServersConfig(file, cacheFile) : parseServersFile(text, file, { skipBrokenServers: true });
    } catch (error) {
      this.#report(errorMessage(error));
      if (isLoadoutError(error) && error.code === 'CONFIG_INVALID') this.#options.reject?.(error.message);
      return;
    }
    this.#lastText = text;
    this.#lastProblem = undefined;
    logger.debug({ mod: 'config' }, 'servers.yaml reloaded');
    try {
      await this.#options.apply(loaded.config, loaded.brokenServers);
    } catch (error) {
      logger.error({ mod: 'config', err: errorMessage(error) }, 'applying servers.yaml failed');
    }
  }

  // One log line per distinct problem: an editor saving the same broken file twice is not news.
  #report(problem: string): void {
    if (problem === this.#lastProblem) return;
    this.#lastProblem = problem;
    this.#options.logger.error({ mod: 'config' }, `${problem}; keeping the last good config`);
  }
}
