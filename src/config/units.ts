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

/** A duration in config: a string with a unit (`30s`) or a number of seconds. Yields milliseconds. */
export const durationMs = z.union([z.number().nonnegative(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'number') return Math.round(v * 1000);
  const ms = parseDuration(v);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected a duration like 500ms, 30s, 2m, 1h or 1d, got "${v}"` });
    return z.NEVER;
  }
  return ms;
});

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
