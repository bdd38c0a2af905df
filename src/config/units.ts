import { z } from 'zod';

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `250ms`, `30s`, `2m`, `1h`, `1d` to milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i;
const UNIT_BYTES = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 } as const;

/** Parses `512kb`, `1mb`, `1048576` to bytes. */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_BYTES[(m[2] ?? 'b').toLowerCase() as keyof typeof UNIT_BYTES]);
}

/**
 * Longest duration any setting takes (100 years): every duration ends up added to a time, in
 * JavaScript or in Postgres, and one beyond the timestamp range fails where it is used instead of
 * where it was written. Settings with a tighter sense have their own bound on top.
 */
export const MAX_DURATION_MS = 36_500 * 86_400_000;

/** A duration in config: a string with a unit (`30s`) or a number of seconds. Yields milliseconds. */
export const durationMs = z.union([z.number().nonnegative(), z.string()]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? Math.round(v * 1000) : parseDuration(v);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected a duration like 500ms, 30s, 2m, 1h or 1d, got "${v}"` });
    return z.NEVER;
  }
  if (!(ms <= MAX_DURATION_MS)) {
    ctx.addIssue({ code: 'custom', message: `expected a duration of at most 36500d, got "${v}"` });
    return z.NEVER;
  }
  return ms;
});

/**
 * Longest wait between two attempts anywhere in tekil: a ladder gap, a retry backoff's base and cap, a
 * honoured Retry-After. Next-attempt times are stored as timestamps; a wait beyond this is a mistake,
 * and far beyond it one the database cannot hold (a whole dispatcher or worker batch failed on it).
 */
export const MAX_RETRY_WAIT_MS = 30 * 86_400_000;

/** A duration in config for a wait between attempts: at most MAX_RETRY_WAIT_MS (30d). */
export const retryWaitMs = durationMs.pipe(z.number().max(MAX_RETRY_WAIT_MS, 'expected at most 30d'));

/** A size in config: `1mb`, `512kb` or a number of bytes. Yields bytes. */
export const sizeBytes = z.union([z.number().int().positive(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const bytes = parseSize(v);
  if (bytes === undefined || bytes <= 0) {
    ctx.addIssue({ code: 'custom', message: `expected a size like 512kb or 1mb, got "${v}"` });
    return z.NEVER;
  }
  return bytes;
});
