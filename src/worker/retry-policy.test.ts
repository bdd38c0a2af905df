import { describe, expect, it } from 'vitest';
import { backoffMs, decideRetry } from './retry-policy.js';
import { parseConfig } from '../config/index.js';

describe('retry policy: exponential backoff with full jitter', () => {
  const policy = { max_attempts: 5, base: 1000, cap: 10_000 };

  it('draws uniformly between 0 and min(cap, base · 2^(attempt-1))', () => {
    expect(backoffMs(policy, 1, () => 0.999999)).toBe(999);
    expect(backoffMs(policy, 3, () => 0.5)).toBe(2000);
    expect(backoffMs(policy, 9, () => 0.999999)).toBe(9999); // capped
    expect(backoffMs(policy, 200, () => 0.5)).toBe(5000); // no overflow past the cap
    expect(backoffMs(policy, 4, () => 0)).toBe(0);
  });

  it('retries transient failures until the last attempt, then dead; permanent is dead at once', () => {
    expect(decideRetry(policy, 1, { permanent: false }, () => 0.5)).toEqual({ kind: 'retry', delayMs: 500 });
    expect(decideRetry(policy, 4, { permanent: false }).kind).toBe('retry');
    expect(decideRetry(policy, 5, { permanent: false })).toEqual({ kind: 'dead' });
    expect(decideRetry(policy, 1, { permanent: true })).toEqual({ kind: 'dead' });
  });

  it("uses a 429's Retry-After as a floor under the jittered delay", () => {
    expect(decideRetry(policy, 1, { permanent: false, notBeforeMs: 30_000 }, () => 0.5)).toEqual({ kind: 'retry', delayMs: 30_000 });
  });

  it('defaults cover a day-long outage (expected total wait > 24 h)', () => {
    const config = parseConfig({ sources: { s: { scheme: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } } });
    const retry = config.sources.s!.retry;
    let expectedMs = 0;
    for (let attempt = 1; attempt < retry.max_attempts; attempt++) expectedMs += backoffMs(retry, attempt, () => 0.5);
    expect(expectedMs).toBeGreaterThan(24 * 3_600_000);
    // and durations parse from config text
    const custom = parseConfig({ sources: { s: { scheme: 'standard', secrets: ['x'], retry: { max_attempts: 12, base: '1s', cap: '1h' } } } });
    expect(custom.sources.s!.retry).toEqual({ max_attempts: 12, base: 1000, cap: 3_600_000 });
  });
});
