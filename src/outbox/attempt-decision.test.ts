import { describe, expect, it } from 'vitest';
import type { PostResult } from '../http/post.js';
import { endpointStreaks, nextStep, outcomeOf, probeDelay, type AttemptOutcome } from './attempt-decision.js';
import { heldStep } from './breaker-hold.js';
import type { OutboxCompletion } from './types.js';

const startedAt = new Date(0);
const answered = (statusCode: number, headers: Record<string, string> = {}, body = 'answer'): PostResult => ({
  ok: true,
  startedAt,
  durationMs: 5,
  statusCode,
  headers,
  body,
});

describe('attempt outcome', () => {
  it('counts only 2xx as success; 3xx is an unfollowed redirect; Retry-After is read on failures', () => {
    expect(outcomeOf(answered(204))).toMatchObject({ succeeded: true, error: null, statusCode: 204 });
    expect(outcomeOf(answered(302))).toMatchObject({ succeeded: false, error: 'redirect (HTTP 302) not followed' });
    expect(outcomeOf(answered(503, { 'retry-after': '30' }))).toMatchObject({ succeeded: false, error: 'HTTP 503', retryAfterMs: 30_000 });
    expect(outcomeOf(answered(400, {}, 'bad'))).toMatchObject({ succeeded: false, error: 'HTTP 400', responseBody: 'bad', unsendable: false });
  });

  it('marks a request that could not be built as unsendable, and nothing else', () => {
    const failed = (failure: 'timeout' | 'forbidden' | 'request' | 'network'): PostResult => ({ ok: false, startedAt, durationMs: 1, failure, error: failure });
    expect(outcomeOf(failed('request')).unsendable).toBe(true);
    for (const f of ['timeout', 'forbidden', 'network'] as const) expect(outcomeOf(failed(f)).unsendable, f).toBe(false);
  });
});

describe('next step', () => {
  const failure: AttemptOutcome = {
    startedAt,
    durationMs: 1,
    succeeded: false,
    statusCode: 500,
    error: 'HTTP 500',
    responseBody: null,
    retryAfterMs: undefined,
    unsendable: false,
  };
  const base = { gapsMs: [1_000, 2_000], attemptsOnLadder: 1, timeScale: 1, retryAfterMaxMs: 60_000 };

  it('retries on the ladder, fails when it is exhausted or unreadable, and at once when unsendable', () => {
    expect(nextStep({ ...base, outcome: { ...failure, succeeded: true, error: null } })).toEqual({ next: 'succeeded', delayMs: 0 });
    const retry = nextStep({ ...base, outcome: failure });
    expect(retry.next).toBe('pending');
    expect(retry.delayMs).toBeGreaterThanOrEqual(900);
    expect(retry.delayMs).toBeLessThanOrEqual(1_100);
    expect(nextStep({ ...base, attemptsOnLadder: 3, outcome: failure })).toEqual({ next: 'failed', delayMs: 0 });
    expect(nextStep({ ...base, gapsMs: undefined, outcome: failure })).toEqual({ next: 'failed', delayMs: 0 });
    expect(nextStep({ ...base, outcome: { ...failure, unsendable: true } })).toEqual({ next: 'failed', delayMs: 0 });
  });
});

describe('endpoint failure streaks', () => {
  const c = (endpointId: string, next: OutboxCompletion['next'], endpointHadFailures = false) =>
    ({ endpointId, next, endpointHadFailures, succeeded: next === 'succeeded', probeDelayMs: 7 }) as OutboxCompletion;
  const streak = (reset: boolean, failed: number, attemptReset: boolean, attemptFailed: number, probeDelayMs = 7) => ({
    reset,
    failed,
    attemptReset,
    attemptFailed,
    probeDelayMs,
  });

  it('counts deliveries that end failed and every failed attempt, and resets both on a success after failures', () => {
    const streaks = endpointStreaks([c('a', 'failed'), c('a', 'failed'), c('a', 'pending'), c('b', 'succeeded', true), c('c', 'succeeded'), c('d', 'pending')]);
    expect(Object.fromEntries(streaks)).toEqual({ a: streak(false, 2, false, 3), b: streak(true, 0, true, 0, 0), d: streak(false, 0, false, 1) });
  });

  it('counts for the breaker only the failed attempts after the last success of the group', () => {
    const streaks = endpointStreaks([c('a', 'pending', true), c('a', 'succeeded', true), c('a', 'pending', true), c('a', 'pending', true)]);
    expect(streaks.get('a')).toEqual(streak(true, 0, true, 2));
  });
});

describe('410 Gone and the breaker probe', () => {
  const gone = {
    startedAt: new Date(),
    durationMs: 1,
    succeeded: false,
    statusCode: 410,
    error: 'HTTP 410',
    responseBody: null,
    retryAfterMs: undefined,
    unsendable: false,
  };
  const base = { gapsMs: [1_000, 2_000], attemptsOnLadder: 1, timeScale: 1, retryAfterMaxMs: 3_600_000 };

  it('fails the delivery at once on 410 when gone_is_permanent, and retries it otherwise', () => {
    expect(nextStep({ ...base, outcome: gone, goneIsPermanent: true })).toEqual({ next: 'failed', delayMs: 0 });
    expect(nextStep({ ...base, outcome: gone, goneIsPermanent: false }).next).toBe('pending');
  });

  it("spaces probes by the ladder's shortest gap, however long the streak: no delivery waits longer than its own next gap", () => {
    expect(probeDelay([1_000, 2_000, 5_000], 20, 20, 1)).toBe(1_000);
    expect(probeDelay([1_000, 2_000, 5_000], 21, 20, 1)).toBe(1_000);
    expect(probeDelay([60_000, 120_000, 8 * 3_600_000], 99, 20, 0.01)).toBe(600);
    expect(probeDelay([5_000, 1_000], 99, 20, 1)).toBe(1_000);
  });
});

describe('the breaker holds a delivery on its own ladder', () => {
  const gaps = [1_000, 2_000, 4_000];
  it('passes the rung whose time came unsent and takes the next gap from the time it was due', () => {
    // One attempt made (attempts 1, base 0): the rung due was attempt 2; the gap after it is 2 s.
    const step = heldStep({ attempts: 1, ladder_base: 0, due_ms: 10_000, now_ms: 10_050 }, gaps, 1);
    expect(step.fail).toBe(false);
    expect(step.rungs).toBe(1);
    expect(step.nextMs).toBeGreaterThanOrEqual(10_000 + 1_800);
    expect(step.nextMs).toBeLessThanOrEqual(10_000 + 2_200);
  });
  it('passes every rung whose time has gone by, and fails at the time its last attempt was due', () => {
    const late = heldStep({ attempts: 1, ladder_base: 0, due_ms: 10_000, now_ms: 14_000 }, gaps, 1);
    expect(late).toMatchObject({ rungs: 2, fail: false });
    const last = heldStep({ attempts: 3, ladder_base: 0, due_ms: 10_000, now_ms: 10_001 }, gaps, 1);
    expect(last).toEqual({ rungs: 1, fail: true, nextMs: 10_000 });
    // A replay's new ladder (base 3) starts again at its first gap.
    expect(heldStep({ attempts: 4, ladder_base: 3, due_ms: 0, now_ms: 1 }, gaps, 1)).toMatchObject({ rungs: 1, fail: false });
    expect(heldStep({ attempts: 1, ladder_base: 0, due_ms: 0, now_ms: 1 }, undefined, 1)).toMatchObject({ fail: true });
  });
});
