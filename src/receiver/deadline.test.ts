import { describe, expect, it } from 'vitest';
import { withinDeadline } from './deadline.js';
import { isTekilError } from '../errors.js';

describe('acknowledgement deadline', () => {
  it('settles with the write when it finishes first, success or failure', async () => {
    await expect(withinDeadline(60_000, 0, async () => 'accepted')).resolves.toBe('accepted');
    await expect(withinDeadline(60_000, 0, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('answers ACK_DEADLINE_EXCEEDED when the write never finishes', async () => {
    const err = await withinDeadline(20, 0, () => new Promise<never>(() => {})).catch((e: unknown) => e);
    expect(isTekilError(err, 'ACK_DEADLINE_EXCEEDED')).toBe(true);
    expect((err as { statusCode: number }).statusCode).toBe(503);
  });

  it('still starts the write of a request that used up the deadline before it (its retry is a duplicate); 0 disables', async () => {
    let started = false;
    let finish!: () => void;
    const err = await withinDeadline(
      1_000,
      1_000,
      () =>
        new Promise<void>((resolve) => {
          started = true;
          finish = resolve;
        }),
    ).catch((e: unknown) => e);
    expect(isTekilError(err, 'ACK_DEADLINE_EXCEEDED')).toBe(true);
    expect(started).toBe(true);
    finish();
    await expect(withinDeadline(0, 1_000_000, async () => 'duplicate')).resolves.toBe('duplicate');
  });
});
