import { describe, expect, it } from 'vitest';
import { ladderGapsMs, ladderPresets, nextAttemptDelay } from './ladders.js';

const s = 1_000;
const m = 60 * s;
const h = 60 * m;

describe('ladder presets: exact gaps', () => {
  it('paymos: 1 min doubling to 8 h — 10 gaps, 11 attempts, the last 16 h 3 min after the first', () => {
    const gaps = ladderGapsMs('paymos');
    expect(gaps).toEqual([1 * m, 2 * m, 4 * m, 8 * m, 16 * m, 32 * m, 1 * h, 2 * h, 4 * h, 8 * h]);
    expect(gaps.reduce((a, b) => a + b, 0)).toBe(16 * h + 3 * m);
  });

  it('mercanpay: 30 s … 24 h — 9 gaps, 10 attempts, the last 46 h 42 min 30 s after the first (not two days)', () => {
    const gaps = ladderGapsMs('mercanpay');
    expect(gaps).toEqual([30 * s, 2 * m, 10 * m, 30 * m, 1 * h, 3 * h, 6 * h, 12 * h, 24 * h]);
    expect(gaps.reduce((a, b) => a + b, 0)).toBe(46 * h + 42 * m + 30 * s);
  });

  it('standard: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — 8 attempts, the last 27 h 35 min 5 s after the first', () => {
    const gaps = ladderGapsMs('standard');
    expect(gaps).toEqual([5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h]);
    expect(gaps.reduce((a, b) => a + b, 0)).toBe(27 * h + 35 * m + 5 * s);
  });

  it('has exactly these presets, and takes a list of gaps or refuses a bad ladder', () => {
    expect(Object.keys(ladderPresets)).toEqual(['paymos', 'mercanpay', 'standard']);
    expect(ladderGapsMs(['30s', '2m'])).toEqual([30 * s, 2 * m]);
    expect(() => ladderGapsMs('nope')).toThrow(/unknown ladder/);
    expect(() => ladderGapsMs(['soon'])).toThrow(/ladder gap/);
    expect(() => ladderGapsMs([])).toThrow(/1 to 50 gaps/);
  });
});

describe('next attempt', () => {
  it('jitters ±10 %, scales, ends after the last gap, and lets Retry-After lengthen a gap within bounds', () => {
    const base = { gapsMs: [60_000, 120_000], timeScale: 1, retryAfterMaxMs: 3_600_000 };
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 1, random: () => 0 })).toBe(54_000);
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 1, random: () => 1 })).toBe(66_000);
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 2, random: () => 0.5, timeScale: 0.001 })).toBe(120);
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 3 })).toBeUndefined();
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 1, random: () => 0.5, retryAfterMs: 600_000 })).toBe(600_000);
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 1, random: () => 0.5, retryAfterMs: 1_000 })).toBe(60_000);
    expect(nextAttemptDelay({ ...base, attemptsOnLadder: 1, random: () => 0.5, retryAfterMs: 86_400_000 })).toBe(3_600_000);
  });
});
