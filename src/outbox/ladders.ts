import { MAX_RETRY_WAIT_MS, parseDuration } from '../config/units.js';
import { TekilError } from '../errors.js';

/**
 * Retry ladders: the gaps between one attempt and the next. A ladder of n gaps makes n + 1 attempts;
 * after the last one the delivery is `failed`.
 */
export const ladderPresets = {
  /** Paymos: 1 minute doubling to 8 hours; 11 attempts, the last 16 h 3 min after the first. */
  paymos: ['1m', '2m', '4m', '8m', '16m', '32m', '1h', '2h', '4h', '8h'],
  /** MercanPay: 30 s growing to 24 h; 10 attempts, the last 46 h 42 min 30 s after the first. */
  mercanpay: ['30s', '2m', '10m', '30m', '1h', '3h', '6h', '12h', '24h'],
  /** Standard Webhooks' recommendation: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; 8 attempts over 27 h 35 min 5 s. */
  standard: ['5s', '5m', '30m', '2h', '5h', '10h', '10h'],
} as const satisfies Record<string, readonly string[]>;

export type LadderPreset = keyof typeof ladderPresets;
/** How an endpoint names its ladder: a preset, or its own list of gaps. */
export type LadderSpec = string | readonly string[];

export function isLadderPreset(name: string): name is LadderPreset {
  return Object.hasOwn(ladderPresets, name);
}

/**
 * Resolves a ladder to its gaps in milliseconds; throws VALIDATION_FAILED on an unknown or bad ladder,
 * or a gap longer than 30 days (MAX_RETRY_WAIT_MS). The dispatcher reads stored ladders with
 * `{ bounded: false }`: one stored before the bound keeps its gaps, and a gap the database cannot
 * schedule fails that one delivery when its attempt is recorded (see record-completions.ts).
 */
export function ladderGapsMs(spec: LadderSpec, options: { bounded?: boolean } = {}): number[] {
  const maxGapMs = options.bounded === false ? Infinity : MAX_RETRY_WAIT_MS;
  let gaps: readonly string[];
  if (typeof spec === 'string') {
    if (!isLadderPreset(spec)) {
      throw new TekilError(
        'VALIDATION_FAILED',
        `unknown ladder preset "${spec}" (expected ${Object.keys(ladderPresets).join(', ')} or a list of gaps like ["30s", "2m"])`,
      );
    }
    gaps = ladderPresets[spec];
  } else {
    gaps = spec;
  }
  if (gaps.length === 0 || gaps.length > 50) throw new TekilError('VALIDATION_FAILED', 'a ladder has 1 to 50 gaps');
  return gaps.map((g) => {
    const ms = parseDuration(g);
    if (ms === undefined || ms <= 0) throw new TekilError('VALIDATION_FAILED', `ladder gap "${g}": expected a duration like 30s, 2m or 1h`);
    if (ms > maxGapMs) throw new TekilError('VALIDATION_FAILED', `ladder gap "${g}": a gap is at most 30d`);
    return ms;
  });
}

/** Jitter keeps a crowd of deliveries that failed together from retrying in lockstep: ±10 %. */
export const JITTER = 0.1;

export interface NextAttemptInput {
  gapsMs: readonly number[];
  /** Attempts already made on the current ladder (1 after the first attempt). */
  attemptsOnLadder: number;
  timeScale: number;
  /** Milliseconds the receiver asked for with Retry-After, when it did. */
  retryAfterMs?: number | undefined;
  retryAfterMaxMs: number;
  random?: () => number;
}

/** Milliseconds until the next attempt, or undefined when the ladder is exhausted. */
export function nextAttemptDelay(input: NextAttemptInput): number | undefined {
  const gap = input.gapsMs[input.attemptsOnLadder - 1];
  if (gap === undefined) return undefined;
  const random = input.random ?? Math.random;
  const jittered = gap * input.timeScale * (1 - JITTER + 2 * JITTER * random());
  if (input.retryAfterMs === undefined) return Math.round(jittered);
  // Retry-After may lengthen a gap (never shorten it), up to the configured bound.
  return Math.round(Math.max(jittered, Math.min(input.retryAfterMs, input.retryAfterMaxMs) * input.timeScale));
}
