import { describe, expect, it } from 'vitest';
import { SlotRestarts } from './restart-policy.js';

const options = { baseDelayMs: 100, maxDelayMs: 1_000, healthyAfterMs: 5_000, maxQuickExits: 5 };

describe('restart policy', () => {
  it('restarts a process that ran healthy after the base delay, however often that happens', () => {
    const slot = new SlotRestarts(options);
    for (let i = 0; i < 20; i++) expect(slot.exited(60_000)).toEqual({ restartInMs: 100 });
  });

  it('doubles the delay for quick exits, caps it, and gives up after five in a row', () => {
    const slot = new SlotRestarts(options);
    expect(slot.exited(undefined)).toEqual({ restartInMs: 100 });
    expect(slot.exited(1_000)).toEqual({ restartInMs: 200 });
    expect(slot.exited(undefined)).toEqual({ restartInMs: 400 });
    expect(slot.exited(undefined)).toEqual({ restartInMs: 800 });
    expect(slot.exited(undefined)).toEqual({ giveUp: true, quickExits: 5 });
  });

  it('a healthy run in between resets the count of quick exits', () => {
    const slot = new SlotRestarts({ ...options, baseDelayMs: 600 });
    slot.exited(undefined);
    slot.exited(undefined);
    expect(slot.exited(undefined)).toEqual({ restartInMs: 1_000 });
    expect(slot.exited(10_000)).toEqual({ restartInMs: 600 });
  });

  it('a process killed by a signal is restarted after the base delay and never counts towards giving up', () => {
    const slot = new SlotRestarts(options);
    slot.exited(undefined);
    slot.exited(undefined);
    for (let i = 0; i < 20; i++) expect(slot.exited(500, true)).toEqual({ restartInMs: 100 });
    expect(slot.exited(undefined)).toEqual({ restartInMs: 400 });
  });
});
