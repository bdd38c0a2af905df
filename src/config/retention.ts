import { z } from 'zod';
import { durationMs } from './units.js';

/**
 * How long to keep something: a duration of at least a day, or `never` (kept for ever). Yields
 * milliseconds, or null for never.
 */
const keepFor = z.union([
  z.literal('never').transform(() => null),
  durationMs.pipe(z.number().min(86_400_000, 'expected at least 1d (a shorter window forgets ids a provider still retries)')),
]);

/**
 * What retention keeps, for one source or for the outbox. `bodies`: after this age a settled delivery's
 * body and headers are trimmed; its record (the id, a tombstone) stays, so a provider's late retry is
 * still a duplicate. `records`: after this age the settled record is deleted with its attempts, and
 * its id is forgotten. The default keeps everything: nothing is deleted unless configured.
 */
const horizons = { bodies: keepFor.default(null), records: keepFor.default(null) };

/**
 * A record without its body is a tombstone; a body without its record cannot be. (`bodies: never`
 * with a `records` age keeps each body until its record goes.)
 */
function recordsOutliveBodies(r: { bodies: number | null; records: number | null }, ctx: z.RefinementCtx): void {
  if (r.records !== null && r.bodies !== null && r.bodies > r.records) {
    ctx.addIssue({ code: 'custom', path: ['records'], message: 'records must be kept at least as long as bodies' });
  }
}

export const retentionSchema = z.object(horizons).strict().superRefine(recordsOutliveBodies);
export type RetentionConfig = z.infer<typeof retentionSchema>;

/**
 * The sweeper (worker role) and the inbox's default retention (a source's own `retention:` block
 * replaces it).
 */
export const retentionSweepSchema = z
  .object({
    /** Default for every source without its own block. */
    ...horizons,
    /** How often a sweep starts. */
    interval: durationMs.pipe(z.number().min(1_000, 'expected at least 1s')).default(600_000),
    /** Rows one statement trims or deletes: small, so each statement holds its row locks briefly. */
    batch_size: z.number().int().min(1).max(50_000).default(1_000),
    /**
     * Least pause between two batches, leaving the store to ingest and processing. The pause is also
     * never shorter than the batch before it took, so a sweep uses at most half of one connection's time.
     */
    batch_pause: durationMs.default(100),
    /** The audit trail (docs/audit.md): rows older than this are deleted; never less than 90 days. */
    audit: z
      .union([
        z.literal('never').transform(() => null),
        durationMs.pipe(z.number().min(90 * 86_400_000, 'expected at least 90d: the audit trail outlives the actions it records')),
      ])
      .default(400 * 86_400_000),
  })
  .strict()
  .superRefine(recordsOutliveBodies);
export type RetentionSweepConfig = z.infer<typeof retentionSweepSchema>;
