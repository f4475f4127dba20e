// One running thing per test (a loopback fixture, a provider, a gateway): started before each test
// and closed after it, so a suite says what it runs without its own let/beforeEach/afterEach.
import { afterEach, beforeEach } from 'vitest';

/**
 * Registers hooks that call `start` before each test and close what it gave after; call the
 * returned function inside a test (or a later hook) for this test's one. Hooks registered later
 * run their afterEach first, so a later one (a gateway) closes before what it uses (its fixtures).
 */
export function usePerTest<T extends { close(): Promise<void> }>(start: () => Promise<T>): () => T {
  let started: T | undefined;
  beforeEach(async () => {
    started = await start();
  });
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });
  return () => {
    if (!started) throw new Error(`usePerTest(${start.name || 'start'}): it runs only while a test runs`);
    return started;
  };
}
