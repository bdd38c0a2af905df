/**
 * The suite's one way to wait for something to become true. Tests wait on a condition they can
 * observe (a row's status, a lock wait in pg_stat_activity, a sink's count), never on a fixed sleep.
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves with the value once `read` returns something other than undefined. */
export async function waitFor<T>(read: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, what = 'value'): Promise<T> {
  let value: T | undefined;
  await waitUntil(async () => (value = await read()) !== undefined, timeoutMs, what);
  return value as T;
}
