import { describe, expect, it, vi } from 'vitest';
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
    // The queue reads performance.now(): a fake one, moved by hand, makes every reading exact, and
    // each flush stays in flight until the test ends it.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const open: Array<() => void> = [];
      const queue = new GroupCommitQueue<ReturnType<typeof item>>(
        { maxItems: 1, maxBytes: 10, queueMaxItems: 10, maxInFlight: 2, noun: 'items' },
        (batch) => new Promise((resolve) => open.push(() => resolve(() => batch.forEach((i) => i.resolve())))),
      );
      queue.start();
      vi.advanceTimersByTime(100);
      expect(queue.busyMs).toBe(0); // idle since it was made

      // Two flushes side by side (two slots): their shared time counts once.
      const a = item();
      const b = item();
      queue.add(a);
      queue.add(b);
      expect(open).toHaveLength(2);
      vi.advanceTimersByTime(40);
      expect(queue.busyMs).toBe(40); // grows while they are in flight
      open.shift()!();
      await a.done;
      vi.advanceTimersByTime(10);
      expect(queue.busyMs).toBe(50); // the other one is still in flight
      open.shift()!();
      await b.done;
      expect(queue.busyMs).toBe(50);

      // Idle: nothing is added.
      vi.advanceTimersByTime(1_000);
      expect(queue.busyMs).toBe(50);

      // A later flush adds its own time.
      const c = item();
      queue.add(c);
      vi.advanceTimersByTime(20);
      expect(queue.busyMs).toBe(70);
      open.shift()!();
      await c.done;
      vi.advanceTimersByTime(5);
      expect(queue.busyMs).toBe(70);
      await queue.stop();
    } finally {
      vi.useRealTimers();
    }
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
