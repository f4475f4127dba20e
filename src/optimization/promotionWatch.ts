// Follows state.json so a promotion or revert made by another loadout process (the CLI, a second
// gateway) reaches this gateway's sessions without a restart. Reads only; never writes.
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage, type Logger } from '../shared/index.js';
import type { OptimizationLoop } from './optimizationLoop.js';

const SETTLE_MS = 100;

/** Watch `stateFile`'s directory and re-apply promotions when it changes; returns the stop function. */
export async function watchPromotions(loop: OptimizationLoop, stateFile: string, logger: Logger): Promise<() => void> {
  const name = path.basename(stateFile);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher;
  try {
    // On a first run the data dir may not exist yet; the watch needs it.
    await mkdir(path.dirname(stateFile), { recursive: true });
    watcher = watch(path.dirname(stateFile), { persistent: false });
  } catch (error) {
    logger.warn(
      { mod: 'optimization', err: errorMessage(error) },
      'cannot watch state.json; promotions by other processes apply at the next start',
    );
    return () => undefined;
  }
  watcher.on('error', (error) => logger.debug({ mod: 'optimization', err: errorMessage(error) }, 'state.json watch error'));
  watcher.on('change', (_event, file) => {
    if (file !== null && String(file) !== name) return;
    // Atomic writes arrive as several events (temp file, rename): settle before reading.
    clearTimeout(timer);
    timer = setTimeout(() => {
      loop
        .applyPromotions()
        .catch((error: unknown) =>
          logger.warn({ mod: 'optimization', err: errorMessage(error) }, 'could not reload promotions from state.json'),
        );
    }, SETTLE_MS);
    timer.unref();
  });
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
