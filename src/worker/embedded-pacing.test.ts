import { describe, expect, it } from 'vitest';
import { embeddedPacing, FIRST_REST_FACTOR, MAX_REST_FACTOR, MIN_REST_FACTOR, restFactorFor, type IngestActivity } from './embedded-pacing.js';

describe('restFactorFor', () => {
  it('leaves the receiver the share of the store it used', () => {
    // share u of the store for the receiver → the worker rests u / (1 − u) batches per batch.
    expect(restFactorFor(0.75)).toBeCloseTo(3);
    expect(restFactorFor(0.8)).toBeCloseTo(4);
    expect(restFactorFor(0.5)).toBeCloseTo(1);
  });

  it('is bounded on both sides, whatever the reading', () => {
    expect(restFactorFor(0)).toBe(MIN_REST_FACTOR);
    expect(restFactorFor(-0.2)).toBe(MIN_REST_FACTOR);
    expect(restFactorFor(0.99)).toBe(MAX_REST_FACTOR);
    expect(restFactorFor(1)).toBe(MAX_REST_FACTOR);
    // Timer readings can overshoot a period slightly; NaN must not become a zero rest.
    expect(restFactorFor(1.05)).toBe(MAX_REST_FACTOR);
    expect(restFactorFor(Number.NaN)).toBe(MAX_REST_FACTOR);
  });
});

/** A receiver that is always writing (every millisecond busy) or never (no millisecond busy). */
function receiver(writing: boolean): IngestActivity {
  return {
    get lastFlushAt() {
      return performance.now();
    },
    get busyMs() {
      return writing ? performance.now() : 0;
    },
  };
}

async function timed(p: Promise<void> | undefined): Promise<number> {
  const t0 = performance.now();
  await p;
  return performance.now() - t0;
}

describe('embeddedPacing', () => {
  // Long enough that a busy machine's timer delays stay small beside the rests compared.
  const batchMs = 20;

  it('rests longest while the receiver alone fills the store', async () => {
    const pacing = embeddedPacing(500, receiver(true));
    const first = await timed(pacing.afterBatch(batchMs, true));
    expect(first).toBeGreaterThanOrEqual(FIRST_REST_FACTOR * batchMs - 2);
    // The first rest measured a receiver busy the whole time: the next is the longest.
    const second = await timed(pacing.afterBatch(batchMs, true));
    expect(second).toBeGreaterThanOrEqual(MAX_REST_FACTOR * batchMs - 2);
  });

  it('rests least while a receiver that flushed recently leaves the store idle', async () => {
    const pacing = embeddedPacing(500, { lastFlushAt: performance.now() + 60_000, busyMs: 0 });
    await pacing.afterBatch(batchMs, true);
    const second = await timed(pacing.afterBatch(batchMs, true));
    expect(second).toBeGreaterThanOrEqual(MIN_REST_FACTOR * batchMs - 2);
    expect(second).toBeLessThan(FIRST_REST_FACTOR * batchMs);
  });

  it('does not rest when the receiver has not written lately, and starts over after', async () => {
    let last = performance.now();
    const activity: IngestActivity = {
      get lastFlushAt() {
        return last;
      },
      get busyMs() {
        return performance.now();
      },
    };
    const pacing = embeddedPacing(500, activity);
    await pacing.afterBatch(batchMs, true); // measures a saturated receiver
    last = -Infinity;
    expect(await timed(pacing.afterBatch(batchMs, true))).toBeLessThan(batchMs);
    expect(pacing.afterBatch(batchMs, false)).toBeUndefined();
    // A new busy period starts from the first factor, not from the last one measured.
    last = performance.now() + 60_000;
    const first = await timed(pacing.afterBatch(batchMs, true));
    expect(first).toBeLessThan(MAX_REST_FACTOR * batchMs - 10);
  });

  it('claims at most the embedded limit', () => {
    expect(embeddedPacing(500, undefined).claimLimit).toBe(64);
    expect(embeddedPacing(10, undefined).claimLimit).toBe(10);
  });
});
