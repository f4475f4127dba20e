import { describe, expect, it } from 'vitest';
import { WorkInFlight } from './workInFlight.js';

function deferred(): { promise: Promise<void>; resolve(): void; reject(error: Error): void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('WorkInFlight', () => {
  it('settles only after every tracked piece, one begun while it waited and one that failed included', async () => {
    const work = new WorkInFlight();
    const first = deferred();
    const failing = deferred();
    const later = deferred();
    void work.track(first.promise);
    work.track(failing.promise).catch(() => undefined);
    let settled = false;
    const done = work.settled().then(() => (settled = true));
    failing.reject(new Error('lost'));
    first.resolve();
    void work.track(later.promise);
    await first.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    later.resolve();
    await done;
    expect(settled).toBe(true);
  });

  it('settles at once with nothing running', async () => {
    await expect(new WorkInFlight().settled()).resolves.toBeUndefined();
  });
});
