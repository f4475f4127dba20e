// A bounded wait on a promise whose outcome does not matter to the waiter: a session DELETE a
// server may never answer, discoveries the agent's first call should not wait for long.

/** Wait for `promise` to settle, but no longer than `ms`; its outcome does not matter. */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([promise.then(undefined, () => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
