import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { GroupCommitQueue, type Queued } from './group-commit.js';

interface Item extends Queued {
  done: Promise<void>;
}

function item(): Item & { resolve(): void } {
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return { bytes: 1, reject: () => undefined, done, resolve };
}

describe('GroupCommitQueue.busyMs', () => {
  it('counts the time a flush is in flight, once however many overlap, and not the idle time', async () => {
    const flushMs = 40;
    const queue = new GroupCommitQueue<ReturnType<typeof item>>({ maxItems: 1, maxBytes: 10, queueMaxItems: 10, maxInFlight: 2, noun: 'items' }, async (batch) => {
      await sleep(flushMs);
      return () => batch.forEach((i) => i.resolve());
    });
    queue.start();
    expect(queue.busyMs).toBe(0);

    // Two flushes side by side (two slots): about one flush's time, not two.
    const a = item();
    const b = item();
    const t0 = performance.now();
    queue.add(a);
    queue.add(b);
    await Promise.all([a.done, b.done]);
    const wall = performance.now() - t0;
    const afterOverlap = queue.busyMs;
    expect(afterOverlap).toBeGreaterThanOrEqual(flushMs - 2);
    // Counted twice, it would be about twice the wall time.
    expect(afterOverlap).toBeLessThanOrEqual(wall + 1);

    // Idle: nothing is added.
    await sleep(flushMs);
    expect(queue.busyMs).toBe(afterOverlap);

    // While a flush is in flight the reading grows with it.
    const c = item();
    queue.add(c);
    await sleep(flushMs / 2);
    const midway = queue.busyMs;
    expect(midway).toBeGreaterThan(afterOverlap + flushMs / 4);
    await c.done;
    expect(queue.busyMs).toBeGreaterThanOrEqual(afterOverlap + flushMs - 2);
    await queue.stop();
  });
});

describe('GroupCommitQueue with gatherTurn', () => {
  /** A queue whose flushes are counted and held open until `release` is called. */
  function holdingQueue(earlyFlushItems: number | undefined, maxInFlight = 2) {
    const flushed: number[] = [];
    const open: Array<() => void> = [];
    const queue = new GroupCommitQueue<ReturnType<typeof item>>(
      { maxItems: 100, maxBytes: 1000, queueMaxItems: 1000, maxInFlight, gatherTurn: true, earlyFlushItems, noun: 'items' },
      (batch) => {
        flushed.push(batch.length);
        return new Promise((resolve) => open.push(() => resolve(() => batch.forEach((i) => i.resolve()))));
      },
    );
    queue.start();
    return { queue, flushed, release: () => open.splice(0).forEach((r) => r()) };
  }

  it('waits for the turn to end before a flush, without earlyFlushItems', async () => {
    const { queue, flushed, release } = holdingQueue(undefined);
    for (let i = 0; i < 40; i++) queue.add(item());
    expect(flushed).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(flushed).toEqual([40]);
    release();
    await queue.stop();
  });

  it('flushes at once when earlyFlushItems wait and a slot is free, the rest at the turn end', async () => {
    const { queue, flushed, release } = holdingQueue(16);
    for (let i = 0; i < 15; i++) queue.add(item());
    expect(flushed).toEqual([]); // fewer than 16: the turn's end, as without the option
    queue.add(item());
    expect(flushed).toEqual([16]); // in the same turn
    for (let i = 0; i < 16; i++) queue.add(item());
    expect(flushed).toEqual([16, 16]); // the second slot
    for (let i = 0; i < 20; i++) queue.add(item());
    expect(flushed).toEqual([16, 16]); // no slot free: these wait
    release();
    await new Promise((r) => setImmediate(r));
    expect(flushed).toEqual([16, 16, 20]);
    release();
    await queue.stop();
  });
});
