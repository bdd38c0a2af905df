import { describe, expect, it } from 'vitest';
import { sleepUntil } from '../src/prove/session.js';

/**
 * prove's timed steps (busy-duplicate sends its copy once the provider's timeout has passed, and
 * reports when) wait by the monotonic clock, and never come back early: a timer can fire a
 * millisecond before its time by the clock that measures it.
 */
describe('sleepUntil', () => {
  it('never resolves before the time has passed by performance.now()', async () => {
    for (let i = 0; i < 40; i++) {
      const since = performance.now();
      await sleepUntil(since, 3 + (i % 5));
      expect(performance.now() - since).toBeGreaterThanOrEqual(3 + (i % 5));
    }
  });

  it('waits only for what is left, and not at all when the time has passed', async () => {
    const since = performance.now() - 1_000;
    const before = performance.now();
    await sleepUntil(since, 500);
    expect(performance.now() - before).toBeLessThan(500);
  });
});
